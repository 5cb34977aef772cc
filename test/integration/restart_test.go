package integration

import (
	"fmt"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"

	"github.com/orch/orch/test/testutil"
)

// snapshot is what a restart must keep.
type snapshot struct {
	cms    []corev1.ConfigMap
	secs   []corev1.Secret
	svcs   []corev1.Service
	deps   []appsv1.Deployment
	rv     string
	nsUIDs map[string]string
}

func takeSnapshot(t *testing.T, cs kubernetes.Interface, ns string) snapshot {
	t.Helper()
	ctx := ctxT(t)
	var sn snapshot
	cms, err := cs.CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{})
	must(t, err, "list configmaps")
	secs, err := cs.CoreV1().Secrets(ns).List(ctx, metav1.ListOptions{})
	must(t, err, "list secrets")
	svcs, err := cs.CoreV1().Services(ns).List(ctx, metav1.ListOptions{})
	must(t, err, "list services")
	deps, err := cs.AppsV1().Deployments(ns).List(ctx, metav1.ListOptions{})
	must(t, err, "list deployments")
	nss, err := cs.CoreV1().Namespaces().List(ctx, metav1.ListOptions{})
	must(t, err, "list namespaces")
	sn.cms, sn.secs, sn.svcs, sn.deps, sn.rv = cms.Items, secs.Items, svcs.Items, deps.Items, deps.ResourceVersion
	sn.nsUIDs = map[string]string{}
	for _, n := range nss.Items {
		sn.nsUIDs[n.Name] = string(n.UID)
	}
	return sn
}

func compareSnapshots(t *testing.T, before, after snapshot) {
	t.Helper()
	if !apiequality.Semantic.DeepEqual(before.cms, after.cms) {
		t.Errorf("configmaps differ after restart:\nbefore %d %+v\nafter  %d %+v", len(before.cms), before.cms, len(after.cms), after.cms)
	}
	if !apiequality.Semantic.DeepEqual(before.secs, after.secs) {
		t.Errorf("secrets differ after restart (%d before, %d after)", len(before.secs), len(after.secs))
	}
	if !apiequality.Semantic.DeepEqual(before.svcs, after.svcs) {
		t.Errorf("services differ after restart:\nbefore %+v\nafter  %+v", before.svcs, after.svcs)
	}
	// The Deployment controller keeps writing status (and the revision
	// annotation): what the user wrote must survive, the rest is live.
	if !apiequality.Semantic.DeepEqual(userParts(before.deps), userParts(after.deps)) {
		t.Errorf("deployments differ after restart:\nbefore %+v\nafter  %+v", before.deps, after.deps)
	}
	for n, uid := range before.nsUIDs {
		if after.nsUIDs[n] != uid {
			t.Errorf("namespace %s uid %s → %q after restart", n, uid, after.nsUIDs[n])
		}
	}
}

// TestRestartKeepsEveryObject writes objects of several kinds, restarts the
// server (clean stop, then SIGKILL) and checks every object is unchanged and
// that writes and resourceVersions carry on from where they were.
func TestRestartKeepsEveryObject(t *testing.T) {
	t.Parallel()
	s := testutil.StartServer(t, testutil.Options{Quiet: true})
	ctx, cs := ctxT(t), s.Clientset
	ns := newNamespace(t, cs)
	// The namespace's controller-made objects exist before the snapshots.
	waitFor(t, "kube-root-ca.crt", func() error {
		_, err := cs.CoreV1().ConfigMaps(ns).Get(ctxT(t), "kube-root-ca.crt", metav1.GetOptions{})
		return err
	})
	waitFor(t, "default ServiceAccount", func() error {
		_, err := cs.CoreV1().ServiceAccounts(ns).Get(ctxT(t), "default", metav1.GetOptions{})
		return err
	})
	for i := range 20 {
		_, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, cm(ns, fmt.Sprintf("cm-%d", i), map[string]string{"i": fmt.Sprint(i)}), metav1.CreateOptions{})
		must(t, err, "create configmap")
	}
	_, err := cs.CoreV1().Secrets(ns).Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "sec"}, Data: map[string][]byte{"pw": []byte("s3cret!")},
	}, metav1.CreateOptions{})
	must(t, err, "create secret")
	_, err = cs.CoreV1().Services(ns).Create(ctx, webService(ns, "web"), metav1.CreateOptions{})
	must(t, err, "create service")
	_, err = cs.AppsV1().Deployments(ns).Create(ctx, webDeployment(ns, "web", 3), metav1.CreateOptions{})
	must(t, err, "create deployment")
	must(t, cs.CoreV1().ConfigMaps(ns).Delete(ctx, "cm-0", metav1.DeleteOptions{}), "delete cm-0")

	for _, how := range []string{"stop", "kill"} {
		before := takeSnapshot(t, cs, ns)
		between, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, cm(ns, "between-"+how, nil), metav1.CreateOptions{})
		must(t, err, "create just before the %s restart", how)
		before = takeSnapshot(t, cs, ns)
		beforeRV := between.ResourceVersion
		if how == "stop" {
			s.Restart()
		} else {
			s.Kill()
			s.Restart()
		}
		cs = s.Clientset
		after := takeSnapshot(t, cs, ns)
		compareSnapshots(t, before, after)
		checkWatchAcrossRestart(t, cs, ns, beforeRV, how)
		// New writes get higher resourceVersions and services keep unique IPs.
		o, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, cm(ns, "after-"+how, nil), metav1.CreateOptions{})
		must(t, err, "create after %s restart", how)
		if rvLess(o.ResourceVersion, before.rv) {
			t.Errorf("resourceVersion went backwards after %s restart: %s < %s", how, o.ResourceVersion, before.rv)
		}
		svc, err := cs.CoreV1().Services(ns).Create(ctx, webService(ns, "svc-"+how), metav1.CreateOptions{})
		must(t, err, "create service after %s restart", how)
		for _, old := range after.svcs {
			if old.Spec.ClusterIP == svc.Spec.ClusterIP {
				t.Errorf("clusterIP %s re-allocated after %s restart (already %s's)", svc.Spec.ClusterIP, how, old.Name)
			}
		}
	}
}

// userParts keeps what a client wrote of each Deployment: identity,
// labels, generation and spec.
func userParts(deps []appsv1.Deployment) []appsv1.Deployment {
	out := make([]appsv1.Deployment, 0, len(deps))
	for _, d := range deps {
		out = append(out, appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: d.Name, Namespace: d.Namespace, UID: d.UID,
			Labels: d.Labels, Generation: d.Generation, CreationTimestamp: d.CreationTimestamp}, Spec: d.Spec})
	}
	return out
}

func rvLess(a, b string) bool {
	var x, y int64
	fmt.Sscan(a, &x)
	fmt.Sscan(b, &y)
	return x < y
}

// checkWatchAcrossRestart resumes a watch from a resourceVersion taken before
// the restart, as an informer does after its connection dropped: the server
// must either answer 410 (history not kept; the client re-lists) or deliver
// every change made after that revision. Silently skipping is the bug.
func checkWatchAcrossRestart(t *testing.T, cs kubernetes.Interface, ns, fromRV, how string) {
	t.Helper()
	ctx := ctxT(t)
	c := cs.CoreV1().ConfigMaps(ns)
	name := "post-" + how
	_, err := c.Create(ctx, cm(ns, name, nil), metav1.CreateOptions{})
	must(t, err, "create after restart")
	w, err := c.Watch(ctx, metav1.ListOptions{ResourceVersion: fromRV})
	if err != nil {
		if st := statusOf(err); st != nil && st.Code == 410 {
			t.Logf("watch from pre-%s rv %s: 410 (history not kept across restarts)", how, fromRV)
			return
		}
		t.Fatalf("watch from pre-%s rv %s: %v", how, fromRV, err)
	}
	defer w.Stop()
	timeout := time.After(time.Minute)
	for {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				t.Fatalf("watch from pre-%s rv %s closed before the post-restart create", how, fromRV)
			}
			if ev.Type == watch.Error {
				if st, ok := ev.Object.(*metav1.Status); ok && st.Code == 410 {
					t.Logf("watch from pre-%s rv %s: 410 event", how, fromRV)
					return
				}
				t.Fatalf("watch error: %+v", ev.Object)
			}
			if o, ok := ev.Object.(*corev1.ConfigMap); ok && o.Name == name {
				return
			}
		case <-timeout:
			t.Fatalf("watch from pre-%s rv %s: no event for %s and no 410 within a minute: the change was skipped", how, fromRV, name)
		}
	}
}
