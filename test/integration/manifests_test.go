package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/orch/orch/test/testutil"
)

const mfConfigMap = `apiVersion: v1
kind: ConfigMap
metadata:
  name: mf-settings
data:
  color: %s
`

const mfDeployment = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: mf-web
  namespace: default
spec:
  replicas: 1
  selector: {matchLabels: {app: mf-web}}
  template:
    metadata: {labels: {app: mf-web}}
    spec:
      containers:
      - name: web
        image: nginx:1.25
`

// mfCRD is a custom resource before its CRD, in one file: the resource is
// retried until the CRD is served.
const mfCRD = `apiVersion: mf.example.com/v1
kind: Gadget
metadata:
  name: g1
  namespace: default
spec:
  size: small
---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: gadgets.mf.example.com
spec:
  group: mf.example.com
  scope: Namespaced
  names: {plural: gadgets, singular: gadget, kind: Gadget}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              size: {type: string}
`

// TestManifestsDir drives the auto-deploy manifests directory of a real
// server: a dropped file is applied (manager orch-deploy), edits update,
// objects removed from the file are pruned, a .skip file freezes it,
// deleting the file prunes the rest, a malformed file is reported as an
// Event and does not stop the others, --disable skips a file.
//
// The server also logs JSON to a --log file (and, with --alsologtostderr,
// to the test's output): the deploy controller's lines are checked there.
func TestManifestsDir(t *testing.T) {
	var dir string
	logFile := filepath.Join(t.TempDir(), "orch.log")
	s := testutil.StartServer(t, testutil.Options{Quiet: true,
		ExtraArgs: []string{"--disable-controller-manager", "--disable", "off",
			"--log", logFile, "--alsologtostderr", "--log-format", "json"},
		Prepare: func(dataDir string) error {
			dir = filepath.Join(dataDir, "server", "manifests")
			if err := os.MkdirAll(dir, 0o700); err != nil {
				return err
			}
			if err := os.WriteFile(filepath.Join(dir, "bad.yaml"), []byte("apiVersion: v1\nkind: [oops\n"), 0o600); err != nil {
				return err
			}
			return os.WriteFile(filepath.Join(dir, "off.yaml"), []byte(mfConfigMapNamed("mf-off")), 0o600)
		}})
	defer func() {
		if t.Failed() {
			t.Logf("--- server output (tail) ---\n%s", s.Output())
		}
	}()
	ctx := ctxT(t)
	cms := s.Clientset.CoreV1().ConfigMaps("kube-system")
	deps := s.Clientset.AppsV1().Deployments("default")
	write := func(name, content string) {
		t.Helper()
		tmp := filepath.Join(dir, "."+name+".tmp") // editors rename into place
		must(t, os.WriteFile(tmp, []byte(content), 0o600), "write %s", name)
		must(t, os.Rename(tmp, filepath.Join(dir, name)), "rename %s", name)
	}
	color := func() string {
		cm, err := cms.Get(ctx, "mf-settings", metav1.GetOptions{})
		if err != nil {
			return "<" + err.Error() + ">"
		}
		return cm.Data["color"]
	}
	deploymentExists := func() bool {
		_, err := deps.Get(ctx, "mf-web", metav1.GetOptions{})
		return err == nil
	}

	write("app.yaml", fmt.Sprintf(mfConfigMap, "red")+"---\n"+mfDeployment)
	mfEventually(t, "ConfigMap and Deployment applied", func() bool { return color() == "red" && deploymentExists() })
	d, err := deps.Get(ctx, "mf-web", metav1.GetOptions{})
	must(t, err, "get deployment")
	if !appliedBy(d.ManagedFields, "orch-deploy") || d.Annotations["orch.io/manifest-file"] != "app.yaml" || d.Labels["orch.io/manifest"] != "app" {
		t.Fatalf("deployment not applied by orch-deploy: managedFields %+v annotations %v labels %v", d.ManagedFields, d.Annotations, d.Labels)
	}

	write("app.yaml", fmt.Sprintf(mfConfigMap, "green")+"---\n"+mfDeployment)
	mfEventually(t, "ConfigMap updated", func() bool { return color() == "green" })

	write("app.yaml", fmt.Sprintf(mfConfigMap, "green"))
	mfEventually(t, "Deployment pruned", func() bool { return !deploymentExists() })
	checkJSONLog(t, logFile, `"logger":"deploy","msg":"pruned object no longer in manifest"`)

	mfEventually(t, "an Event about bad.yaml", func() bool { return hasManifestEvent(ctx, t, s, "bad.yaml") })
	if _, err := cms.Get(ctx, "mf-off", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("--disable off: ConfigMap of off.yaml: err %v, want NotFound", err)
	}

	write("crd.yaml", mfCRD)
	dyn, err := dynamic.NewForConfig(s.Config)
	must(t, err, "dynamic client")
	gadgets := dyn.Resource(schema.GroupVersionResource{Group: "mf.example.com", Version: "v1", Resource: "gadgets"}).Namespace("default")
	mfEventually(t, "custom resource applied once its CRD (same file) is served", func() bool {
		g, err := gadgets.Get(ctx, "g1", metav1.GetOptions{})
		return err == nil && g.GetAnnotations()["orch.io/manifest-file"] == "crd.yaml"
	})

	write("app.yaml.skip", "")
	write("app.yaml", fmt.Sprintf(mfConfigMap, "blue"))
	// The queue is FIFO with one worker: once marker.yaml is applied,
	// app.yaml's change has been handled (and skipped).
	write("marker.yaml", mfConfigMapNamed("mf-marker"))
	mfEventually(t, "marker applied", func() bool { _, err := cms.Get(ctx, "mf-marker", metav1.GetOptions{}); return err == nil })
	if got := color(); got != "green" {
		t.Fatalf("a .skip file's manifest was applied: color %q", got)
	}

	must(t, os.Remove(filepath.Join(dir, "app.yaml")), "remove app.yaml")
	must(t, os.Remove(filepath.Join(dir, "app.yaml.skip")), "remove app.yaml.skip")
	mfEventually(t, "ConfigMap of the deleted file pruned", func() bool {
		_, err := cms.Get(ctx, "mf-settings", metav1.GetOptions{})
		return apierrors.IsNotFound(err)
	})
	must(t, os.Remove(filepath.Join(dir, "crd.yaml")), "remove crd.yaml")
	mfEventually(t, "custom resource pruned", func() bool {
		_, err := gadgets.Get(ctx, "g1", metav1.GetOptions{})
		return apierrors.IsNotFound(err)
	})
	mfEventually(t, "the records of deleted files deleted", func() bool {
		rec, err := cms.List(ctx, metav1.ListOptions{LabelSelector: "orch.io/manifest-record=true"})
		must(t, err, "list records")
		var files []string
		for _, cm := range rec.Items {
			files = append(files, cm.Data["file"])
		}
		sort.Strings(files)
		return strings.Join(files, ",") == "bad.yaml,marker.yaml"
	})
}

func mfConfigMapNamed(name string) string {
	return "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: " + name + "\ndata: {k: v}\n"
}

// checkJSONLog fails unless the --log file is mode 0600, every line is a
// JSON object, and one contains want.
func checkJSONLog(t *testing.T, path, want string) {
	t.Helper()
	st, err := os.Stat(path)
	must(t, err, "stat --log file")
	if st.Mode().Perm() != 0o600 {
		t.Errorf("--log file mode %o, want 600", st.Mode().Perm())
	}
	var data []byte
	mfEventually(t, "the log line "+want, func() bool {
		data, err = os.ReadFile(path)
		must(t, err, "read --log file")
		return strings.Contains(string(data), want)
	})
	for i, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var v map[string]interface{}
		if err := json.Unmarshal([]byte(line), &v); err != nil {
			t.Fatalf("--log file line %d is not JSON: %q", i+1, line)
		}
	}
}

func appliedBy(mf []metav1.ManagedFieldsEntry, manager string) bool {
	for _, e := range mf {
		if e.Manager == manager && e.Operation == metav1.ManagedFieldsOperationApply {
			return true
		}
	}
	return false
}

func hasManifestEvent(ctx context.Context, t *testing.T, s *testutil.Server, file string) bool {
	evs, err := s.Clientset.CoreV1().Events("kube-system").List(ctx, metav1.ListOptions{})
	must(t, err, "list events")
	for _, e := range evs.Items {
		if e.Reason == "InvalidManifest" && strings.Contains(e.Message, "manifest "+file+": document 0") {
			return true
		}
	}
	return false
}

func mfEventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatalf("timed out waiting: %s", what)
}
