package kubectl

import (
	"bufio"
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/orch/orch/test/testutil"
)

// TestKubectl starts one server and runs the kubectl subtests against it,
// each in its own namespace.
func TestKubectl(t *testing.T) {
	s := testutil.StartServer(t, testutil.Options{Quiet: true})
	k := newKC(t, s)
	tests := []struct {
		name string
		fn   func(t *testing.T, k *kc)
	}{
		{"ApplyReapplyThreeWayMerge", testApply},
		{"GetTablesAndFormats", testGet},
		{"Describe", testDescribe},
		{"LabelAnnotate", testLabelAnnotate},
		{"PatchAllTypes", testPatch},
		{"ScaleReplaceDelete", testScaleReplaceDelete},
		{"GetWatch", testGetWatch},
		{"Discovery", testDiscovery},
		{"Errors", testErrors},
		{"ImperativeCreate", testImperativeCreate},
		{"DiffAndEdit", testDiffEdit},
		{"ServiceAccountsAndTokens", testServiceAccounts},
		{"RBAC", testRBAC},
		{"CustomResourceDefinitions", testCRD},
		{"ServerSideApply", testServerSideApply},
		{"CertificateSigningRequests", testCSR},
		{"ClusterTrustBundles", testTrustBundles},
		{"PriorityAndFairnessServiceCIDRsMigrations", testNewAPIs},
		{"Autoscale", testAutoscale},
	}
	t.Run("group", func(t *testing.T) {
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				t.Parallel()
				tc.fn(t, &kc{bin: k.bin, kubeconfig: k.kubeconfig, home: t.TempDir(), cs: k.cs})
			})
		}
	})
	if t.Failed() {
		t.Logf("--- server output (tail) ---\n%s", s.Output())
	}
}

// applySeed applies testdata/seed.yaml into a new namespace.
func applySeed(t *testing.T, k *kc) string {
	t.Helper()
	ns := k.newNamespace(t)
	out := k.ok(t, "apply", "-n", ns, "-f", testdata("seed.yaml"))
	contains(t, "apply seed", out,
		"configmap/app-config created", "secret/app-secret created",
		"deployment.apps/web created", "service/web-service created")
	return ns
}

func testApply(t *testing.T, k *kc) {
	ns := applySeed(t, k)
	out := k.ok(t, "apply", "-n", ns, "-f", testdata("seed.yaml"))
	contains(t, "re-apply unchanged", out,
		"configmap/app-config unchanged", "secret/app-secret unchanged",
		"deployment.apps/web unchanged", "service/web-service unchanged")

	out = k.ok(t, "apply", "-n", ns, "-f", testdata("seed-v2.yaml"))
	contains(t, "apply v2", out,
		"configmap/app-config configured", "secret/app-secret configured",
		"deployment.apps/web configured", "service/web-service unchanged")

	var cm corev1.ConfigMap
	k.getJSON(t, &cm, "-n", ns, "configmap", "app-config")
	if cm.Data["APP_COLOR"] != "green" || cm.Data["APP_MODE"] != "production" {
		t.Errorf("configmap after v2: %v; want APP_COLOR green, APP_MODE production", cm.Data)
	}
	if _, ok := cm.Data["log_level"]; ok {
		t.Errorf("log_level removed from the manifest is still in the live configmap: %v", cm.Data)
	}
	var sec corev1.Secret
	k.getJSON(t, &sec, "-n", ns, "secret", "app-secret")
	if _, ok := sec.Data["DB_USERNAME"]; ok {
		t.Errorf("DB_USERNAME removed from the manifest is still in the live secret")
	}
	if string(sec.Data["DB_PASSWORD"]) != "s3cret!" {
		t.Errorf("DB_PASSWORD = %q, want s3cret!", sec.Data["DB_PASSWORD"])
	}
	var d appsv1.Deployment
	k.getJSON(t, &d, "-n", ns, "deployment", "web")
	c := d.Spec.Template.Spec.Containers[0]
	if *d.Spec.Replicas != 2 || c.Image != "nginx:1.26" {
		t.Errorf("deployment after v2: replicas %d image %s; want 2 and nginx:1.26", *d.Spec.Replicas, c.Image)
	}
	if len(c.Resources.Limits) != 0 {
		t.Errorf("resources.limits removed from the manifest are still live: %v", c.Resources.Limits)
	}
	if c.Resources.Requests.Cpu().String() != "250m" || c.Resources.Requests.Memory().String() != "128Mi" {
		t.Errorf("requests changed: %v", c.Resources.Requests)
	}
	if len(c.EnvFrom) != 2 || c.EnvFrom[0].ConfigMapRef == nil || c.EnvFrom[1].SecretRef == nil {
		t.Errorf("envFrom = %+v, want the configmap and the secret", c.EnvFrom)
	}
	if d.Annotations["kubectl.kubernetes.io/last-applied-configuration"] == "" {
		t.Errorf("no last-applied-configuration annotation on the deployment")
	}
	if d.Generation != 2 {
		t.Errorf("deployment generation %d after one spec change, want 2", d.Generation)
	}
	// Server-side apply is a different code path; it must at least work or say clearly why not.
	out, errOut, err := k.run(t, "apply", "--server-side", "-n", ns, "-f", testdata("seed-v2.yaml"))
	if err != nil {
		t.Logf("note: server-side apply failed: %s", errOut)
	} else {
		contains(t, "server-side apply", out, "configmap/app-config serverside-applied")
	}
}

func testGet(t *testing.T, k *kc) {
	ns := applySeed(t, k)
	for _, tc := range []struct {
		args []string
		cols []string
		row  []string
	}{
		{[]string{"deployments"}, []string{"NAME", "READY", "UP-TO-DATE", "AVAILABLE", "AGE"}, []string{"web", "0/3"}},
		{[]string{"services"}, []string{"NAME", "TYPE", "CLUSTER-IP", "EXTERNAL-IP", "PORT(S)", "AGE"}, []string{"web-service", "ClusterIP", "10.43.", "80/TCP"}},
		{[]string{"configmaps"}, []string{"NAME", "DATA", "AGE"}, []string{"app-config", "4"}},
		{[]string{"secrets"}, []string{"NAME", "TYPE", "DATA", "AGE"}, []string{"app-secret", "Opaque", "3"}},
		{[]string{"deployments", "-o", "wide"}, []string{"NAME", "READY", "CONTAINERS", "IMAGES", "SELECTOR"}, []string{"nginx:1.25", "app=web"}},
	} {
		out := k.ok(t, append([]string{"get", "-n", ns}, tc.args...)...)
		hdr := headerFields(out)
		for _, c := range tc.cols {
			if !slices.Contains(hdr, c) {
				t.Errorf("kubectl get %v: header %v lacks column %s", tc.args, hdr, c)
			}
		}
		contains(t, "kubectl get "+strings.Join(tc.args, " "), out, tc.row...)
	}
	out := k.ok(t, "get", "-n", ns, "configmap", "app-config", "-o", "yaml")
	contains(t, "get -o yaml", out, "kind: ConfigMap", "APP_COLOR: blue", "name: app-config", "namespace: "+ns, "resourceVersion:", "uid:")
	var cm corev1.ConfigMap
	k.getJSON(t, &cm, "-n", ns, "configmap", "app-config")
	if cm.Data["nginx.conf"] == "" || !strings.Contains(cm.Data["nginx.conf"], "server {") {
		t.Errorf("nginx.conf = %q", cm.Data["nginx.conf"])
	}
	var list corev1.List
	k.getJSON(t, &list, "-n", ns, "all")
	if len(list.Items) < 2 {
		t.Errorf("kubectl get all: %d items, want the deployment and the service", len(list.Items))
	}
	out = k.ok(t, "get", "-n", ns, "secret", "app-secret", "-o", "jsonpath={.data.API_KEY}")
	if dec, _ := base64.StdEncoding.DecodeString(out); string(dec) != "sk-abc123xyz" {
		t.Errorf("jsonpath API_KEY = %q (decoded %q), want sk-abc123xyz", out, dec)
	}
	out = k.ok(t, "get", "-n", ns, "deploy,svc", "-l", "app=web")
	contains(t, "get deploy,svc -l app=web", out, "deployment.apps/web")
	out = k.ok(t, "get", "namespaces")
	contains(t, "get namespaces", out, "default", "kube-system", ns, "Active")
	_, errOut, _ := k.run(t, "get", "-n", ns, "pods", "-l", "app=none")
	contains(t, "get pods (none)", errOut, "No resources found in "+ns+" namespace.")
	out = k.ok(t, "get", "-A", "configmaps", "--field-selector", "metadata.name=app-config")
	contains(t, "get -A --field-selector", out, "NAMESPACE", ns, "app-config")
}

func testDescribe(t *testing.T, k *kc) {
	ns := applySeed(t, k)
	out := k.ok(t, "describe", "-n", ns, "deployment", "web")
	contains(t, "describe deployment", out, "Name:", "web", "Namespace:", ns, "Selector:", "app=web",
		"Replicas:", "3 desired", "StrategyType:", "RollingUpdate", "nginx:1.25", "250m", "256Mi", "app-config", "app-secret")
	out = k.ok(t, "describe", "-n", ns, "configmap", "app-config")
	contains(t, "describe configmap", out, "APP_COLOR", "blue", "nginx.conf")
	out = k.ok(t, "describe", "-n", ns, "secret", "app-secret")
	contains(t, "describe secret", out, "DB_PASSWORD", "bytes")
	notContains(t, "describe secret", out, "s3cret!", "czNjcmV0IQ==")
	out = k.ok(t, "describe", "-n", ns, "service", "web-service")
	contains(t, "describe service", out, "Selector:", "app=web", "Type:", "ClusterIP", "IP:", "10.43.", "TargetPort:", "8080/TCP")
}

func testLabelAnnotate(t *testing.T, k *kc) {
	ns := applySeed(t, k)
	out := k.ok(t, "label", "-n", ns, "configmap", "app-config", "tier=frontend")
	contains(t, "label", out, "configmap/app-config labeled")
	out = k.ok(t, "get", "-n", ns, "configmaps", "-l", "tier=frontend", "-o", "name")
	if strings.TrimSpace(out) != "configmap/app-config" {
		t.Errorf("get -l tier=frontend = %q", out)
	}
	errOut := k.fails(t, "label", "-n", ns, "configmap", "app-config", "tier=backend")
	contains(t, "label without --overwrite", errOut, "already has a value")
	k.ok(t, "label", "-n", ns, "configmap", "app-config", "tier=backend", "--overwrite")
	out = k.ok(t, "get", "-n", ns, "configmap", "app-config", "-o", "jsonpath={.metadata.labels.tier}")
	if out != "backend" {
		t.Errorf("label after overwrite = %q, want backend", out)
	}
	out = k.ok(t, "label", "-n", ns, "configmap", "app-config", "tier-")
	contains(t, "remove label", out, "configmap/app-config unlabeled")
	out = k.ok(t, "get", "-n", ns, "configmap", "app-config", "-o", "jsonpath={.metadata.labels}")
	notContains(t, "labels after removal", out, "tier")
	k.ok(t, "label", "-n", ns, "deployment", "web", "tier=frontend")
	out = k.ok(t, "get", "-n", ns, "deployment", "web", "-o", "jsonpath={.metadata.generation}")
	if out != "1" {
		t.Errorf("generation after label = %s, want 1", out)
	}
	out = k.ok(t, "annotate", "-n", ns, "deployment", "web", "owner=team-a")
	contains(t, "annotate", out, "deployment.apps/web annotated")
	out = k.ok(t, "get", "-n", ns, "deployment", "web", "-o", "jsonpath={.metadata.annotations.owner}")
	if out != "team-a" {
		t.Errorf("annotation owner = %q", out)
	}
	out = k.ok(t, "get", "-n", ns, "deployment", "web", "-o", "jsonpath={.metadata.generation}")
	if out != "2" {
		t.Errorf("generation after annotate = %s, want 2 (upstream bumps a Deployment's generation on annotation changes)", out)
	}
}

func testPatch(t *testing.T, k *kc) {
	ns := applySeed(t, k)
	out := k.ok(t, "patch", "-n", ns, "configmap", "app-config", "--type=merge", "-p", `{"data":{"APP_COLOR":"red","log_level":null}}`)
	contains(t, "patch merge", out, "configmap/app-config patched")
	var cm corev1.ConfigMap
	k.getJSON(t, &cm, "-n", ns, "configmap", "app-config")
	if _, ok := cm.Data["log_level"]; cm.Data["APP_COLOR"] != "red" || ok {
		t.Errorf("after merge patch: %v", cm.Data)
	}
	out = k.ok(t, "patch", "-n", ns, "deployment", "web", "--type=strategic", "-p",
		`{"spec":{"template":{"spec":{"containers":[{"name":"sidecar","image":"busybox:1.36"}]}}}}`)
	contains(t, "patch strategic", out, "deployment.apps/web patched")
	var d appsv1.Deployment
	k.getJSON(t, &d, "-n", ns, "deployment", "web")
	var names []string
	for _, c := range d.Spec.Template.Spec.Containers {
		names = append(names, c.Name)
	}
	slices.Sort(names)
	if !slices.Equal(names, []string{"nginx", "sidecar"}) {
		t.Errorf("containers after strategic patch = %v, want nginx and sidecar (merge by name)", names)
	}
	out = k.ok(t, "patch", "-n", ns, "deployment", "web", "--type=json", "-p",
		`[{"op":"replace","path":"/spec/replicas","value":4}]`)
	contains(t, "patch json", out, "deployment.apps/web patched")
	out = k.ok(t, "get", "-n", ns, "deployment", "web", "-o", "jsonpath={.spec.replicas}")
	if out != "4" {
		t.Errorf("replicas after json patch = %s, want 4", out)
	}
	out = k.ok(t, "patch", "-n", ns, "deployment", "web", "--type=json", "-p",
		`[{"op":"replace","path":"/spec/replicas","value":4}]`)
	contains(t, "no-op patch", out, "deployment.apps/web patched (no change)")
	errOut := k.fails(t, "patch", "-n", ns, "deployment", "web", "--type=json", "-p", `[{"op":"remove","path":"/spec/nope"}]`)
	contains(t, "failing json patch", errOut, "/spec/nope")
}

func testScaleReplaceDelete(t *testing.T, k *kc) {
	ns := applySeed(t, k)
	out := k.ok(t, "scale", "-n", ns, "deployment", "web", "--replicas=5")
	contains(t, "scale", out, "deployment.apps/web scaled")
	out = k.ok(t, "get", "-n", ns, "deployment", "web", "-o", "jsonpath={.spec.replicas}")
	if out != "5" {
		t.Errorf("replicas after scale = %s", out)
	}
	errOut := k.fails(t, "scale", "-n", ns, "deployment", "web", "--replicas=6", "--current-replicas=3")
	contains(t, "scale with a wrong --current-replicas", errOut, "Expected replicas to be 3, was 5")

	yaml := k.ok(t, "get", "-n", ns, "configmap", "app-config", "-o", "yaml")
	yaml = strings.Replace(yaml, "APP_COLOR: blue", "APP_COLOR: purple", 1)
	out = k.stdin(t, yaml, "replace", "-n", ns, "-f", "-")
	contains(t, "replace", out, "configmap/app-config replaced")
	out = k.ok(t, "get", "-n", ns, "configmap", "app-config", "-o", "jsonpath={.data.APP_COLOR}")
	if out != "purple" {
		t.Errorf("APP_COLOR after replace = %q", out)
	}
	// Replacing with the old resourceVersion again is a conflict.
	out, err := k.stdinErr(t, yaml, "replace", "-n", ns, "-f", "-")
	if err == nil {
		t.Errorf("replace with a stale resourceVersion succeeded:\n%s", out)
	}
	contains(t, "stale replace", out, "the object has been modified")

	out = k.ok(t, "delete", "-n", ns, "configmap", "app-config")
	contains(t, "delete", out, `configmap "app-config" deleted`)
	errOut = k.fails(t, "get", "-n", ns, "configmap", "app-config")
	contains(t, "get deleted", errOut, `Error from server (NotFound): configmaps "app-config" not found`)
	out = k.ok(t, "delete", "-n", ns, "-f", testdata("seed.yaml"), "--ignore-not-found")
	contains(t, "delete -f", out, `deployment.apps "web" deleted`, `service "web-service" deleted`, `secret "app-secret" deleted`)
	_, errOut, _ = k.run(t, "get", "-n", ns, "all")
	contains(t, "get all after delete", errOut, "No resources found")
}

func testGetWatch(t *testing.T, k *kc) {
	ns := applySeed(t, k)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c := k.cmd(ctx, "get", "-n", ns, "configmaps", "-w", "-o", "custom-columns=NAME:.metadata.name,COLOR:.data.APP_COLOR")
	stdout, err := c.StdoutPipe()
	must(t, err)
	c.Stderr = io.Discard
	must(t, c.Start())
	defer func() {
		cancel()
		_ = c.Wait()
	}()
	lines := make(chan string, 100)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	waitLine(t, lines, "app-config", "blue")
	k.ok(t, "patch", "-n", ns, "configmap", "app-config", "--type=merge", "-p", `{"data":{"APP_COLOR":"yellow"}}`)
	waitLine(t, lines, "app-config", "yellow")
	k.stdin(t, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: late\ndata:\n  APP_COLOR: pink\n", "create", "-n", ns, "-f", "-")
	waitLine(t, lines, "late", "pink")
}

func waitLine(t *testing.T, lines <-chan string, want ...string) {
	t.Helper()
	timeout := time.After(time.Minute)
	for {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("kubectl get -w ended before a line with %v", want)
			}
			t.Logf("watch line: %s", l)
			f := strings.Fields(l)
			if len(f) >= len(want) && slices.Equal(f[:len(want)], want) {
				return
			}
		case <-timeout:
			t.Fatalf("kubectl get -w printed no line with %v within a minute", want)
		}
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func testDiscovery(t *testing.T, k *kc) {
	out := k.ok(t, "api-resources")
	hdr := headerFields(out)
	for _, c := range []string{"NAME", "SHORTNAMES", "APIVERSION", "NAMESPACED", "KIND"} {
		if !slices.Contains(hdr, c) {
			t.Errorf("api-resources header %v lacks %s", hdr, c)
		}
	}
	for _, row := range [][]string{
		{"configmaps", "cm", "v1", "true", "ConfigMap"},
		{"deployments", "deploy", "apps/v1", "true", "Deployment"},
		{"namespaces", "ns", "v1", "false", "Namespace"},
		{"services", "svc", "v1", "true", "Service"},
		{"secrets", "v1", "true", "Secret"},
	} {
		found := false
		for _, l := range strings.Split(out, "\n") {
			if slices.Equal(strings.Fields(l), row) {
				found = true
			}
		}
		if !found {
			t.Errorf("api-resources has no row %v", row)
		}
	}
	out = k.ok(t, "api-versions")
	contains(t, "api-versions", out, "apps/v1", "v1\n", "batch/v1")
	out = k.ok(t, "explain", "deployment.spec.strategy")
	contains(t, "explain deployment.spec.strategy", out, "GROUP:", "apps", "KIND:", "Deployment", "VERSION:", "v1", "FIELD:", "strategy", "rollingUpdate", "type", "Recreate")
	out = k.ok(t, "explain", "configmap")
	contains(t, "explain configmap", out, "KIND:", "ConfigMap", "data", "immutable")
	out = k.ok(t, "version")
	contains(t, "version", out, "Client Version:", "Server Version: v1.")
	out = k.ok(t, "version", "-o", "json")
	contains(t, "version -o json", out, `"serverVersion"`, `"gitVersion"`, `"platform"`)
	out = k.ok(t, "cluster-info")
	contains(t, "cluster-info", out, "is running at", "https://127.0.0.1:")
	// SelfSubjectAccessReview is not in the brief's resource list: note only.
	if out, errOut, err := k.run(t, "auth", "can-i", "create", "deployments"); err != nil || strings.TrimSpace(out) != "yes" {
		t.Logf("note: kubectl auth can-i does not work (%v): %s%s", err, out, errOut)
	}
}

func testErrors(t *testing.T, k *kc) {
	ns := k.newNamespace(t)
	errOut := k.fails(t, "apply", "-n", ns, "-f", testdata("unknown-field.yaml"))
	contains(t, "apply with an unknown field", errOut, "replicaz")
	errOut = k.fails(t, "create", "-n", ns, "-f", testdata("invalid-name.yaml"))
	contains(t, "create with an invalid name", errOut, "Invalid_Name", "metadata.name", "RFC 1123")
	out, err := k.stdinErr(t, "apiVersion: v1\nkind: Secret\nmetadata:\n  name: Bad_Name\n", "create", "-n", ns, "-f", "-")
	if err == nil {
		t.Errorf("create of a secret named Bad_Name succeeded")
	}
	contains(t, "create secret with an invalid name", out, "Bad_Name", "is invalid", "metadata.name")
	errOut = k.fails(t, "get", "-n", ns, "widgets")
	contains(t, "get an unknown resource type", errOut, `the server doesn't have a resource type "widgets"`)
	out, err = k.stdinErr(t, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n", "create", "-n", "no-such-namespace-zz", "-f", "-")
	if err == nil {
		t.Errorf("create in a missing namespace succeeded")
	}
	contains(t, "create in a missing namespace", out, "NotFound", "no-such-namespace-zz")
	out, _, _ = k.run(t, "get", "-n", ns, "configmaps", "-o", "name")
	if strings.Contains(out, "typo") || strings.Contains(out, "Invalid_Name") || strings.Contains(out, "Bad_Name") {
		t.Errorf("failed creates left objects: %s", out)
	}
	errOut = k.fails(t, "get", "-n", ns, "deployment", "typo")
	contains(t, "rejected apply stored nothing", errOut, "NotFound")
}

// testImperativeCreate covers kubectl's typed-client commands (create
// namespace/configmap/secret/deployment): these send protobuf bodies.
func testImperativeCreate(t *testing.T, k *kc) {
	name := fmt.Sprintf("kc-imperative-%04x", rand.IntN(0x10000))
	out := k.ok(t, "create", "namespace", name)
	contains(t, "create namespace", out, "namespace/"+name+" created")
	t.Cleanup(func() { _, _, _ = k.run(t, "delete", "namespace", name, "--wait=false") })
	out = k.ok(t, "create", "configmap", "-n", name, "cfg", "--from-literal=APP_COLOR=blue")
	contains(t, "create configmap", out, "configmap/cfg created")
	out = k.ok(t, "create", "secret", "generic", "-n", name, "sec", "--from-literal=pw=s3cret!")
	contains(t, "create secret", out, "secret/sec created")
	out = k.ok(t, "create", "deployment", "-n", name, "web", "--image=nginx:1.25", "--replicas=2")
	contains(t, "create deployment", out, "deployment.apps/web created")
	out = k.ok(t, "expose", "-n", name, "deployment", "web", "--port=80", "--target-port=8080")
	contains(t, "expose", out, "service/web exposed")
	out = k.ok(t, "get", "-n", name, "service", "web", "-o", "jsonpath={.spec.selector.app}")
	if out != "web" {
		t.Errorf("exposed service selector app=%q, want web", out)
	}
}

// testDiffEdit covers kubectl diff (a server-side dry-run patch) and kubectl
// edit (get, run $KUBE_EDITOR, patch).
func testDiffEdit(t *testing.T, k *kc) {
	ns := applySeed(t, k)
	out, err := k.stdinErr(t, "", "diff", "-n", ns, "-f", testdata("seed-v2.yaml"))
	if err == nil {
		t.Errorf("kubectl diff against changed manifests exited 0 (want 1: differences found)")
	}
	contains(t, "diff", out, "-  APP_COLOR: blue", "+  APP_COLOR: green", "-  log_level: info", "nginx:1.26")
	var cm corev1.ConfigMap
	k.getJSON(t, &cm, "-n", ns, "configmap", "app-config")
	if cm.Data["APP_COLOR"] != "blue" {
		t.Errorf("kubectl diff (dry-run) changed the live object: APP_COLOR=%s", cm.Data["APP_COLOR"])
	}
	out, err = k.stdinErr(t, "", "diff", "-n", ns, "-f", testdata("seed.yaml"))
	if err != nil {
		t.Errorf("kubectl diff against the applied manifests: %v (want exit 0, no differences)\n%s", err, out)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c := k.cmd(ctx, "edit", "-n", ns, "configmap", "app-config")
	c.Env = append(c.Env, "KUBE_EDITOR=sed -i s/APP_MODE:\\ production/APP_MODE:\\ staging/")
	b, err := c.CombinedOutput()
	t.Logf("kubectl edit → %v\n%s", err, b)
	if err != nil {
		t.Fatalf("kubectl edit: %v\n%s", err, b)
	}
	contains(t, "edit", string(b), "configmap/app-config edited")
	got := k.ok(t, "get", "-n", ns, "configmap", "app-config", "-o", "jsonpath={.data.APP_MODE}")
	if got != "staging" {
		t.Errorf("APP_MODE after edit = %q, want staging", got)
	}
}
