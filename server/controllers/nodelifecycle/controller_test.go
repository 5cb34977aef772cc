package nodelifecycle

import (
	"context"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	k8stypes "k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"

	"github.com/orch/orch/server/controllers/kit"
)

type env struct {
	t     *testing.T
	ctx   context.Context
	cs    *fake.Clientset
	clk   *clocktesting.FakeClock
	c     *Controller
	start time.Time
}

func newEnv(t *testing.T, objs ...any) *env {
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	var rts []runtime.Object
	for _, o := range objs {
		rts = append(rts, o.(runtime.Object))
	}
	cs := fake.NewClientset(rts...)
	start := time.Unix(10000, 0)
	clk := clocktesting.NewFakeClock(start)
	kc := kit.New(cs, zaptest.NewLogger(t), kit.Options{NodeMonitorGracePeriod: 40 * time.Second})
	c, err := newWithClock(kc, clk)
	if err != nil {
		t.Fatal(err)
	}
	if err := kc.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if !kit.WaitForSync(ctx, c.synced...) {
		t.Fatal("caches did not sync")
	}
	t.Cleanup(func() { cancel(); kc.Shutdown() })
	return &env{t: t, ctx: ctx, cs: cs, clk: clk, c: c, start: start}
}

// waitCache waits until the informers' view satisfies cond.
func (e *env) waitCache(cond func() bool) {
	e.t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			e.t.Fatal("cache did not catch up")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func (e *env) node() *corev1.Node {
	n, err := e.cs.CoreV1().Nodes().Get(e.ctx, "n1", metav1.GetOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	return n
}

func readyNode() *corev1.Node {
	n := nodeWith(corev1.ConditionTrue)
	n.Status.Conditions[0].LastHeartbeatTime = metav1.NewTime(time.Unix(9990, 0))
	return n
}

func lease() *coordinationv1.Lease {
	return &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: "n1", Namespace: leaseNamespace},
		Spec: coordinationv1.LeaseSpec{RenewTime: &metav1.MicroTime{Time: time.Unix(9995, 0)}}}
}

func pod(name string, tols ...corev1.Toleration) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: k8stypes.UID("uid-" + name)},
		Spec:   corev1.PodSpec{NodeName: "n1", Tolerations: tols},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}}}
}

func TestLeaseExpiryTaintsAndEvicts(t *testing.T) {
	tol300 := corev1.Toleration{Key: corev1.TaintNodeUnreachable, Operator: corev1.TolerationOpExists,
		Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr.To[int64](300)}
	e := newEnv(t, readyNode(), lease(), pod("plain"), pod("tolerant", tol300))
	// Fresh heartbeat: nothing happens.
	if err := e.c.syncNode(e.ctx, "n1"); err != nil {
		t.Fatal(err)
	}
	if readyStatus(e.node()) != corev1.ConditionTrue {
		t.Fatal("a fresh node was marked")
	}
	// 41 s without a renewal: Unknown, then the unreachable taints.
	e.clk.Step(41 * time.Second)
	if err := e.c.syncNode(e.ctx, "n1"); err != nil {
		t.Fatal(err)
	}
	n := e.node()
	if readyStatus(n) != corev1.ConditionUnknown || condition(n, corev1.NodeReady).Message != messageUnknown {
		t.Fatalf("node not Unknown: %+v", n.Status.Conditions)
	}
	e.waitCache(func() bool { c, _ := e.c.nodes.Get("n1"); return readyStatus(c) == corev1.ConditionUnknown })
	if err := e.c.syncNode(e.ctx, "n1"); err != nil {
		t.Fatal(err)
	}
	n = e.node()
	if got := keys(n.Spec.Taints); len(got) != 2 || got[1] != "node.kubernetes.io/unreachable:NoExecute" {
		t.Fatalf("taints %v", got)
	}
	p, _ := e.cs.CoreV1().Pods("default").Get(e.ctx, "plain", metav1.GetOptions{})
	if p.Status.Conditions[0].Status != corev1.ConditionFalse {
		t.Fatal("pod on an unreachable node is still Ready")
	}
	e.waitCache(func() bool { c, _ := e.c.nodes.Get("n1"); return len(c.Spec.Taints) == 2 })
	// The pod without a toleration goes at once, the tolerant one after 300s.
	e.syncPods()
	e.wantPod("plain", false)
	e.wantPod("tolerant", true)
	if got := e.disruption("plain"); got.Reason != "DeletionByTaintManager" {
		t.Fatalf("evicted pod's DisruptionTarget: %+v", got)
	}
	e.clk.Step(301 * time.Second)
	e.syncPods()
	e.wantPod("tolerant", false)
}

func (e *env) syncPods() {
	for _, k := range []string{"default/plain", "default/tolerant"} {
		if err := e.c.syncPod(e.ctx, k); err != nil {
			e.t.Fatal(err)
		}
	}
}

func (e *env) wantPod(name string, exists bool) {
	e.t.Helper()
	_, err := e.cs.CoreV1().Pods("default").Get(e.ctx, name, metav1.GetOptions{})
	if exists && err != nil {
		e.t.Fatalf("pod %s: %v", name, err)
	}
	if !exists && !apierrors.IsNotFound(err) {
		e.t.Fatalf("pod %s still exists (%v)", name, err)
	}
}

// disruption is the DisruptionTarget condition the controller last wrote
// on pod name before deleting it (the fake deletes at once), and for pod GC
// also checks the pod was marked Failed.
func (e *env) disruption(name string) corev1.PodCondition {
	e.t.Helper()
	var got corev1.PodCondition
	for _, a := range e.cs.Actions() {
		u, ok := a.(k8stesting.UpdateAction)
		if !ok || a.GetSubresource() != "status" {
			continue
		}
		p, ok := u.GetObject().(*corev1.Pod)
		if !ok {
			continue
		}
		for _, c := range p.Status.Conditions {
			if p.Name == name && c.Type == corev1.DisruptionTarget {
				got = c
				if name == "orphan" && p.Status.Phase != corev1.PodFailed {
					e.t.Fatalf("orphan marked disrupted in phase %s", p.Status.Phase)
				}
			}
		}
	}
	return got
}

func TestRenewalKeepsNodeHealthy(t *testing.T) {
	e := newEnv(t, readyNode(), lease())
	for range 5 {
		e.clk.Step(30 * time.Second)
		l := lease()
		l.Spec.RenewTime = &metav1.MicroTime{Time: e.clk.Now()}
		if _, err := e.cs.CoordinationV1().Leases(leaseNamespace).Update(e.ctx, l, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		e.waitCache(func() bool {
			c, _ := e.c.leases.Leases(leaseNamespace).Get("n1")
			return c.Spec.RenewTime.Equal(l.Spec.RenewTime)
		})
		if err := e.c.syncNode(e.ctx, "n1"); err != nil {
			t.Fatal(err)
		}
	}
	if readyStatus(e.node()) != corev1.ConditionTrue || len(e.node().Spec.Taints) != 0 {
		t.Fatalf("a renewing node was marked: %+v", e.node())
	}
}

func TestOrphanPodIsDeleted(t *testing.T) {
	p := pod("orphan")
	p.Spec.NodeName = "gone"
	e := newEnv(t, p)
	if err := e.c.syncPod(e.ctx, "default/orphan"); err != nil {
		t.Fatal(err)
	}
	e.wantPod("orphan", true) // quarantine: the Node may still come
	e.clk.Step(41 * time.Second)
	if err := e.c.syncPod(e.ctx, "default/orphan"); err != nil {
		t.Fatal(err)
	}
	e.wantPod("orphan", false)
	if got := e.disruption("orphan"); got.Reason != "DeletionByPodGC" {
		t.Fatalf("orphan's DisruptionTarget: %+v", got)
	}
	if len(e.c.missing) != 0 {
		t.Fatalf("quarantine records left: %v", e.c.missing)
	}
}

func TestCordonTaint(t *testing.T) {
	n := readyNode()
	n.Spec.Unschedulable = true
	e := newEnv(t, n, lease())
	if err := e.c.syncNode(e.ctx, "n1"); err != nil {
		t.Fatal(err)
	}
	if got := keys(e.node().Spec.Taints); len(got) != 1 || got[0] != "node.kubernetes.io/unschedulable:NoSchedule" {
		t.Fatalf("taints %v", got)
	}
}
