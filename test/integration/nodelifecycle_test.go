package integration

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/orch/orch/test/testutil"
)

// TestNodeFailureEviction: an API-only node whose Lease stops being
// renewed goes Ready=Unknown with the unreachable taints after
// --node-monitor-grace-period; its Deployment pod is evicted once its
// tolerationSeconds run out and the replacement lands on the healthy node.
func TestNodeFailureEviction(t *testing.T) {
	t.Parallel()
	s := testutil.StartServer(t, testutil.Options{Quiet: true, ExtraArgs: []string{"--node-monitor-grace-period", "4s"}})
	cs, ctx := s.Clientset, ctxT(t)
	ns := newNamespace(t, cs)
	healthy := atomic.Bool{}
	healthy.Store(true)
	lifecycleNode(t, ctx, cs, "lc-a", func() bool { return healthy.Load() })
	lifecycleDeployment(t, ctx, cs, ns)
	first := waitBoundPod(t, ctx, cs, ns, "lc-a")
	lifecycleNode(t, ctx, cs, "lc-b", func() bool { return true })
	healthy.Store(false)
	waitCond(t, "lc-a Unknown and tainted unreachable:NoExecute", func() (bool, string) {
		n, err := cs.CoreV1().Nodes().Get(ctx, "lc-a", metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		ready, tainted := false, false
		for _, c := range n.Status.Conditions {
			ready = ready || (c.Type == corev1.NodeReady && c.Status == corev1.ConditionUnknown)
		}
		for _, tt := range n.Spec.Taints {
			tainted = tainted || (tt.Key == corev1.TaintNodeUnreachable && tt.Effect == corev1.TaintEffectNoExecute)
		}
		return ready && tainted, fmt.Sprintf("%+v %+v", n.Status.Conditions, n.Spec.Taints)
	})
	waitCond(t, "the pod on lc-a evicted", func() (bool, string) {
		p, err := cs.CoreV1().Pods(ns).Get(ctx, first, metav1.GetOptions{})
		return err != nil || p.DeletionTimestamp != nil, fmt.Sprint(err)
	})
	waitBoundPod(t, ctx, cs, ns, "lc-b")
}

// lifecycleNode creates a Ready API-only node and renews its Lease every
// second while alive() is true; both are deleted when the test ends.
func lifecycleNode(t *testing.T, ctx context.Context, cs kubernetes.Interface, name string, alive func() bool) {
	t.Helper()
	schedNodesNamed(t, cs, name)
	lease := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: corev1.NamespaceNodeLease},
		Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To(name), LeaseDurationSeconds: ptr.To[int32](40),
			RenewTime: &metav1.MicroTime{Time: time.Now()}}}
	if _, err := cs.CoordinationV1().Leases(corev1.NamespaceNodeLease).Create(ctx, lease, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
			}
			if !alive() {
				continue
			}
			l, err := cs.CoordinationV1().Leases(corev1.NamespaceNodeLease).Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				continue
			}
			l.Spec.RenewTime = &metav1.MicroTime{Time: time.Now()}
			_, _ = cs.CoordinationV1().Leases(corev1.NamespaceNodeLease).Update(ctx, l, metav1.UpdateOptions{})
		}
	}()
	t.Cleanup(func() {
		close(stop)
		<-done
		_ = cs.CoordinationV1().Leases(corev1.NamespaceNodeLease).Delete(context.Background(), name, metav1.DeleteOptions{})
	})
}

// schedNodesNamed creates one Ready node called name (deleted at the end).
func schedNodesNamed(t *testing.T, cs kubernetes.Interface, name string) {
	t.Helper()
	rl := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4"), corev1.ResourceMemory: resource.MustParse("8Gi"),
		corev1.ResourcePods: resource.MustParse("110")}
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{corev1.LabelHostname: name, "lifecycle-test": "yes"}},
		Status: corev1.NodeStatus{Capacity: rl, Allocatable: rl, Conditions: []corev1.NodeCondition{
			{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady", LastHeartbeatTime: metav1.Now()}}}}
	if _, err := cs.CoreV1().Nodes().Create(context.Background(), node, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create node %s: %v", name, err)
	}
	t.Cleanup(func() { _ = cs.CoreV1().Nodes().Delete(context.Background(), name, metav1.DeleteOptions{}) })
}

func lifecycleDeployment(t *testing.T, ctx context.Context, cs kubernetes.Interface, ns string) {
	t.Helper()
	labels := map[string]string{"app": "lc"}
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "lc"}, Spec: appsv1.DeploymentSpec{
		Replicas: ptr.To[int32](1), Selector: &metav1.LabelSelector{MatchLabels: labels},
		Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: corev1.PodSpec{
			NodeSelector: map[string]string{"lifecycle-test": "yes"},
			Tolerations: []corev1.Toleration{{Key: corev1.TaintNodeUnreachable, Operator: corev1.TolerationOpExists,
				Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr.To[int64](2)}},
			Containers: []corev1.Container{{Name: "c", Image: "docker.io/library/busybox:1.36"}}}}}}
	if _, err := cs.AppsV1().Deployments(ns).Create(ctx, d, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// waitBoundPod waits for a live pod of ns bound to node and returns its name.
func waitBoundPod(t *testing.T, ctx context.Context, cs kubernetes.Interface, ns, node string) string {
	t.Helper()
	var name string
	waitCond(t, "a pod bound to "+node, func() (bool, string) {
		pods, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err.Error()
		}
		var seen []string
		for _, p := range pods.Items {
			seen = append(seen, p.Name+"@"+p.Spec.NodeName)
			if p.Spec.NodeName == node && p.DeletionTimestamp == nil {
				name = p.Name
				return true, ""
			}
		}
		return false, fmt.Sprint(seen)
	})
	return name
}

func waitCond(t *testing.T, what string, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		ok, state := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: never happened; last: %s", what, state)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
