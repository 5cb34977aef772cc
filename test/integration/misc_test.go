package integration

import (
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/util/retry"

	"github.com/orch/orch/test/testutil"
)

func init() {
	register("DryRunStoresNothing", testDryRun)
	register("GenerateName", testGenerateName)
	register("WatchWithSelectors", testWatchSelectors)
	register("Discovery", testDiscovery)
	register("ClusterScoped", testClusterScoped)
}

func testDryRun(t *testing.T, s *testutil.Server) {
	ctx, cs := ctxT(t), s.Clientset
	ns := newNamespace(t, cs)
	c := cs.CoreV1().ConfigMaps(ns)
	out, err := c.Create(ctx, cm(ns, "dry", map[string]string{"a": "1"}), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
	must(t, err, "dry-run create")
	if out.Name != "dry" || out.Data["a"] != "1" {
		t.Errorf("dry-run create answered %+v", out)
	}
	_, err = c.Get(ctx, "dry", metav1.GetOptions{})
	wantCode(t, err, 404, "get after a dry-run create")
	real, err := c.Create(ctx, cm(ns, "real", map[string]string{"a": "1"}), metav1.CreateOptions{})
	must(t, err, "create")
	real.Data["a"] = "2"
	_, err = c.Update(ctx, real, metav1.UpdateOptions{DryRun: []string{metav1.DryRunAll}})
	must(t, err, "dry-run update")
	must(t, c.Delete(ctx, "real", metav1.DeleteOptions{DryRun: []string{metav1.DryRunAll}}), "dry-run delete")
	got, err := c.Get(ctx, "real", metav1.GetOptions{})
	must(t, err, "get after dry-run update and delete")
	if got.Data["a"] != "1" || got.ResourceVersion != real.ResourceVersion {
		t.Errorf("dry-run update/delete changed the object: data %v rv %s→%s", got.Data, real.ResourceVersion, got.ResourceVersion)
	}
	_, err = c.Create(ctx, cm(ns, "x", nil), metav1.CreateOptions{DryRun: []string{"Sometimes"}})
	wantCode(t, err, 400, "unknown dryRun value")
}

func testGenerateName(t *testing.T, s *testutil.Server) {
	ctx, cs := ctxT(t), s.Clientset
	ns := newNamespace(t, cs)
	c := cs.CoreV1().ConfigMaps(ns)
	seen := map[string]bool{}
	for range 20 {
		o, err := c.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{GenerateName: "gen-"}}, metav1.CreateOptions{})
		must(t, err, "create with generateName")
		if !strings.HasPrefix(o.Name, "gen-") || len(o.Name) != len("gen-")+5 || seen[o.Name] {
			t.Fatalf("generated name %q: want gen- plus 5 characters, unique", o.Name)
		}
		seen[o.Name] = true
	}
}

func testWatchSelectors(t *testing.T, s *testutil.Server) {
	ctx, cs := ctxT(t), s.Clientset
	ns := newNamespace(t, cs)
	other := newNamespace(t, cs)
	c := cs.CoreV1().ConfigMaps(ns)
	w, err := c.Watch(ctx, metav1.ListOptions{LabelSelector: "app=web"})
	must(t, err, "watch -l app=web")
	defer w.Stop()
	fw, err := c.Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=named"})
	must(t, err, "watch --field-selector metadata.name=named")
	defer fw.Stop()
	mk := func(ns, name string, labels map[string]string) *corev1.ConfigMap {
		o := cm(ns, name, map[string]string{"v": "1"})
		o.Labels = labels
		return o
	}
	_, err = cs.CoreV1().ConfigMaps(other).Create(ctx, mk(other, "elsewhere", map[string]string{"app": "web"}), metav1.CreateOptions{})
	must(t, err, "create in other namespace")
	_, err = c.Create(ctx, mk(ns, "nolabel", nil), metav1.CreateOptions{})
	must(t, err, "create")
	web, err := c.Create(ctx, mk(ns, "web", map[string]string{"app": "web"}), metav1.CreateOptions{})
	must(t, err, "create")
	_, err = c.Create(ctx, mk(ns, "named", nil), metav1.CreateOptions{})
	must(t, err, "create")
	// Relabelling out of the selector is seen as DELETED by the watcher.
	web.Labels = map[string]string{"app": "db"}
	_, err = c.Update(ctx, web, metav1.UpdateOptions{})
	must(t, err, "relabel")
	must(t, c.Delete(ctx, "named", metav1.DeleteOptions{}), "delete named")

	want := []string{"ADDED web", "DELETED web"}
	if got := collect(t, w, len(want)); !slices.Equal(got, want) {
		t.Errorf("label-selector watch saw %v, want %v (other namespaces and non-matching objects filtered)", got, want)
	}
	want = []string{"ADDED named", "DELETED named"}
	if got := collect(t, fw, len(want)); !slices.Equal(got, want) {
		t.Errorf("field-selector watch saw %v, want %v", got, want)
	}
}

func collect(t *testing.T, w watch.Interface, n int) []string {
	t.Helper()
	var got []string
	timeout := time.After(time.Minute)
	for len(got) < n {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				return got
			}
			if o, ok := ev.Object.(*corev1.ConfigMap); ok {
				got = append(got, string(ev.Type)+" "+o.Name)
			} else {
				got = append(got, string(ev.Type)+" ?")
			}
		case <-timeout:
			return got
		}
	}
	// Nothing else may follow.
	select {
	case ev := <-w.ResultChan():
		if o, ok := ev.Object.(*corev1.ConfigMap); ok {
			got = append(got, string(ev.Type)+" "+o.Name)
		}
	case <-time.After(time.Second):
	}
	return got
}

func testDiscovery(t *testing.T, s *testutil.Server) {
	groups, resources, err := s.Clientset.Discovery().ServerGroupsAndResources()
	must(t, err, "discovery")
	var gvs []string
	for _, g := range groups {
		gvs = append(gvs, g.PreferredVersion.GroupVersion)
	}
	for _, want := range []string{"v1", "apps/v1", "batch/v1", "networking.k8s.io/v1", "coordination.k8s.io/v1"} {
		if !slices.Contains(gvs, want) {
			t.Errorf("discovery lacks group version %s (has %v)", want, gvs)
		}
	}
	verbs := map[string][]string{}
	for _, rl := range resources {
		for _, r := range rl.APIResources {
			verbs[rl.GroupVersion+"/"+r.Name] = r.Verbs
		}
	}
	for _, r := range []string{"v1/configmaps", "v1/pods", "v1/pods/status", "apps/v1/deployments", "apps/v1/deployments/scale"} {
		if _, ok := verbs[r]; !ok {
			t.Errorf("discovery lacks %s", r)
		}
	}
	for _, v := range []string{"create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"} {
		if !slices.Contains(verbs["v1/configmaps"], v) {
			t.Errorf("configmaps verbs %v lack %s", verbs["v1/configmaps"], v)
		}
	}
	v, err := s.Clientset.Discovery().ServerVersion()
	must(t, err, "server version")
	if v.Major != "1" || !strings.HasPrefix(v.GitVersion, "v1.") {
		t.Errorf("server version %+v", v)
	}
}

func testClusterScoped(t *testing.T, s *testutil.Server) {
	ctx, cs := ctxT(t), s.Clientset
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "it-node-" + sanitize(t.Name()), Labels: map[string]string{"zone": "a"}}}
	n, err := cs.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{})
	must(t, err, "create node")
	t.Cleanup(func() { _ = cs.CoreV1().Nodes().Delete(ctx, node.Name, metav1.DeleteOptions{}) })
	if n.Namespace != "" {
		t.Errorf("node has namespace %q", n.Namespace)
	}
	l, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: "zone=a"})
	must(t, err, "list nodes")
	if len(l.Items) != 1 {
		t.Errorf("nodes with zone=a: %d, want 1", len(l.Items))
	}
	r := raw(ctx, s, "GET", "/api/v1/namespaces/default/nodes", "application/json", nil)
	if r.code != 404 {
		t.Errorf("GET of nodes under a namespace: HTTP %d, want 404", r.code)
	}
	// The server's node IPAM controller writes spec.podCIDR right after the
	// create, so update the status from a fresh read.
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cur, err := cs.CoreV1().Nodes().Get(ctx, node.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		cur.Status.Capacity = corev1.ResourceList{corev1.ResourceCPU: mustQuantity("4")}
		_, err = cs.CoreV1().Nodes().UpdateStatus(ctx, cur, metav1.UpdateOptions{})
		return err
	})
	must(t, err, "update node status")
}

func mustQuantity(s string) resource.Quantity { return resource.MustParse(s) }
