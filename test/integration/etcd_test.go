package integration

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/orch/orch/datastore/etcdstore/etcdtest"
	"github.com/orch/orch/test/testutil"
)

// etcdArgs are the `orch server` flags for the test etcd e.
func etcdArgs(e *etcdtest.Etcd, extra ...string) []string {
	return append([]string{"--datastore-endpoint", e.Endpoint, "--datastore-cafile", e.CAFile,
		"--datastore-certfile", e.CertFile, "--datastore-keyfile", e.KeyFile}, extra...)
}

// TestEtcdDatastore runs orch on a real external etcd (TLS, client
// certificates): CRUD, list, watch, 409 on a stale update, 410 Gone after
// compaction, and data kept across a restart of orch.
func TestEtcdDatastore(t *testing.T) {
	t.Parallel()
	e := etcdtest.Start(t)
	s := testutil.StartServer(t, testutil.Options{Quiet: true,
		ExtraArgs: etcdArgs(e, "--datastore-compaction-interval", "2s")})
	ctx, cs := ctxT(t), s.Clientset
	ns := newNamespace(t, cs)
	c := cs.CoreV1().ConfigMaps(ns)
	first, err := c.Create(ctx, cm(ns, "a", map[string]string{"k": "1"}), metav1.CreateOptions{})
	must(t, err, "create configmap")
	only := metav1.ListOptions{FieldSelector: "metadata.name=a"} // not kube-root-ca.crt
	list, err := c.List(ctx, only)
	must(t, err, "list configmaps")
	if len(list.Items) != 1 || list.Items[0].Name != "a" {
		t.Fatalf("list = %+v", list.Items)
	}
	only.ResourceVersion = list.ResourceVersion
	w, err := c.Watch(ctx, only)
	must(t, err, "watch configmaps")
	defer w.Stop()
	upd := first.DeepCopy()
	upd.Data["k"] = "2"
	second, err := c.Update(ctx, upd, metav1.UpdateOptions{})
	must(t, err, "update configmap")
	upd.Data["k"] = "3" // still at the first resourceVersion
	_, err = c.Update(ctx, upd, metav1.UpdateOptions{})
	wantCode(t, err, 409, "update with a stale resourceVersion")
	must(t, c.Delete(ctx, "a", metav1.DeleteOptions{}), "delete configmap")
	wantEvent(t, w, watch.Modified, second.ResourceVersion)
	wantEvent(t, w, watch.Deleted, "")

	_, err = c.Create(ctx, cm(ns, "kept", map[string]string{"k": "v"}), metav1.CreateOptions{})
	must(t, err, "create configmap")
	waitGone(t, c.Watch, first.ResourceVersion)

	etcdKubectl(t, s, "create", "configmap", "bykubectl", "-n", ns, "--from-literal=a=b")

	s.Restart()
	got, err := s.Clientset.CoreV1().ConfigMaps(ns).Get(ctxT(t), "kept", metav1.GetOptions{})
	must(t, err, "get configmap after restart")
	if got.Data["k"] != "v" {
		t.Fatalf("configmap after restart = %+v", got.Data)
	}
	if out := etcdKubectl(t, s, "get", "configmap", "bykubectl", "-n", ns, "-o", "jsonpath={.data.a}"); out != "b" {
		t.Fatalf("kubectl get after restart = %q, want b", out)
	}

}

// etcdKubectl runs the real upstream kubectl against s and returns its output.
func etcdKubectl(t *testing.T, s *testutil.Server, args ...string) string {
	t.Helper()
	cmd := exec.Command(testutil.Kubectl(t), append([]string{"--kubeconfig", s.Kubeconfig}, args...)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("kubectl %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

// TestEtcdGoneNotReady checks that a server whose etcd is gone says so in
// /readyz (so a load balancer stops sending it requests).
func TestEtcdGoneNotReady(t *testing.T) {
	t.Parallel()
	e := etcdtest.Start(t)
	s := testutil.StartServer(t, testutil.Options{Quiet: true, ExtraArgs: etcdArgs(e)})
	e.Kill()
	deadline := time.Now().Add(60 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		_, err := s.Clientset.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx)
		cancel()
		if err != nil {
			t.Logf("readyz without etcd: %v", err)
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("/readyz still ok 60s after etcd died")
		}
		time.Sleep(500 * time.Millisecond)
	}
}

func wantEvent(t *testing.T, w watch.Interface, typ watch.EventType, rv string) {
	t.Helper()
	select {
	case ev, ok := <-w.ResultChan():
		if !ok {
			t.Fatalf("watch closed, want %s", typ)
		}
		obj, _ := ev.Object.(*corev1.ConfigMap)
		if ev.Type != typ || obj == nil || (rv != "" && obj.ResourceVersion != rv) {
			t.Fatalf("watch event %s %+v, want %s at %q", ev.Type, ev.Object, typ, rv)
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("no %s event within 30s", typ)
	}
}

// waitGone waits until a watch from rv answers 410 Gone (after etcd's
// compaction passed it).
func waitGone(t *testing.T, watchFn func(context.Context, metav1.ListOptions) (watch.Interface, error), rv string) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		w, err := watchFn(ctx, metav1.ListOptions{ResourceVersion: rv})
		gone := false
		if err != nil {
			gone = statusOf(err) != nil && statusOf(err).Code == 410
		} else {
			select {
			case ev := <-w.ResultChan():
				st, ok := ev.Object.(*metav1.Status)
				gone = ev.Type == watch.Error && ok && st.Code == 410
			case <-time.After(time.Second):
			}
			w.Stop()
		}
		cancel()
		if gone {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("watch from resourceVersion %s not 410 Gone within 60s (last error %v)", rv, err)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// TestEtcdTwoServers runs two orch servers on one etcd: both serve the API,
// exactly one runs the control loops, and when it stops the other takes
// over.
func TestEtcdTwoServers(t *testing.T) {
	t.Parallel()
	e := etcdtest.Start(t)
	s1 := testutil.StartServer(t, testutil.Options{Quiet: true, KeepOutput: true, ExtraArgs: etcdArgs(e)})
	s2 := testutil.StartServer(t, testutil.Options{Quiet: true, KeepOutput: true, ExtraArgs: etcdArgs(e),
		Prepare: func(dir string) error { return copyIdentity(s1.DataDir, dir) }})
	ctx := ctxT(t)
	leader, follower := s1, s2
	if leads(s2) {
		leader, follower = s2, s1
	}
	if !leads(leader) || leads(follower) {
		t.Fatalf("want exactly one server running control loops:\n--- s1 ---\n%s\n--- s2 ---\n%s", s1.Output(), s2.Output())
	}
	ns := newNamespace(t, follower.Clientset)
	deployAndCheck(t, ctx, follower.Clientset, ns, "web", 3)
	if leads(follower) {
		t.Fatal("the follower started control loops")
	}

	if err := leader.Stop(); err != nil {
		t.Logf("leader exited with %v", err)
	}
	deadline := time.Now().Add(60 * time.Second)
	for !leads(follower) {
		if time.Now().After(deadline) {
			t.Fatalf("the follower did not take over within 60s:\n%s", follower.Output())
		}
		time.Sleep(200 * time.Millisecond)
	}
	deployAndCheck(t, ctx, follower.Clientset, ns, "after", 2)
}

// leads reports whether s has logged that it runs the control loops (and
// not that it stopped them since).
func leads(s *testutil.Server) bool {
	out := s.Output()
	return strings.LastIndex(out, "leader: running control loops") > strings.LastIndex(out, "not leader: control loops stopped")
}

// deployAndCheck creates a Deployment and checks that it gets exactly one
// ReplicaSet with exactly replicas pods, which stays so: two controller
// managers at once would race on them.
func deployAndCheck(t *testing.T, ctx context.Context, cs kubernetes.Interface, ns, name string, replicas int32) {
	t.Helper()
	labels := map[string]string{"app": name}
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, Spec: appsv1.DeploymentSpec{
		Replicas: ptr.To(replicas), Selector: &metav1.LabelSelector{MatchLabels: labels},
		Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: corev1.PodSpec{
			Containers: []corev1.Container{{Name: "c", Image: "nginx:1.25"}}}},
	}}
	_, err := cs.AppsV1().Deployments(ns).Create(ctx, d, metav1.CreateOptions{})
	must(t, err, "create deployment %s", name)
	sel := "app=" + name
	count := func() (int, int) {
		rss, err := cs.AppsV1().ReplicaSets(ns).List(ctx, metav1.ListOptions{LabelSelector: sel})
		must(t, err, "list replicasets")
		pods, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: sel})
		must(t, err, "list pods")
		return len(rss.Items), len(pods.Items)
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		rs, pods := count()
		if rs == 1 && pods == int(replicas) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("deployment %s: %d replicasets, %d pods after 60s; want 1 and %d", name, rs, pods, replicas)
		}
		time.Sleep(200 * time.Millisecond)
	}
	time.Sleep(3 * time.Second)
	if rs, pods := count(); rs != 1 || pods != int(replicas) {
		t.Fatalf("deployment %s settled at %d replicasets, %d pods; want 1 and %d", name, rs, pods, replicas)
	}
}

// copyIdentity gives a second server the first one's CA, keys and join
// token, as servers of one cluster must share them.
func copyIdentity(from, to string) error {
	dst := filepath.Join(to, "server")
	if err := os.MkdirAll(dst, 0o700); err != nil {
		return err
	}
	src := filepath.Join(from, "server")
	for _, name := range []string{"tls", "token"} {
		if out, err := exec.Command("cp", "-a", filepath.Join(src, name), dst).CombinedOutput(); err != nil {
			return fmt.Errorf("copying %s: %w: %s", name, err, out)
		}
	}
	return nil
}
