package integration

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/orch/orch/test/testutil"
)

// TestSchedFakeNodes runs the scheduler of a real `orch server
// --disable-agent` against API-only Nodes (Ready, no agent). Subtests run
// in order; each creates its own nodes (labelled with its name) and
// deletes them, so the "0/N nodes" counts are its own.
func TestSchedFakeNodes(t *testing.T) {
	s := testutil.StartServer(t, testutil.Options{Quiet: true})
	cs := s.Clientset
	for _, tc := range []struct {
		name string
		fn   func(t *testing.T, cs kubernetes.Interface, ns string)
	}{
		{"spread", schedSpread},
		{"anti-affinity", schedAntiAffinity},
		{"oversized", schedOversized},
		{"preemption", schedPreemption},
	} {
		t.Run(tc.name, func(t *testing.T) { tc.fn(t, cs, newNamespace(t, cs)) })
	}
	if t.Failed() {
		t.Logf("--- server output (tail) ---\n%s", s.Output())
	}
}

// schedNodes creates n Ready nodes "<prefix>-<i>" with cpu each, labelled
// sched-test=<prefix>, and deletes them when the test ends.
func schedNodes(t *testing.T, cs kubernetes.Interface, prefix string, n int, cpu string) []string {
	t.Helper()
	var names []string
	for i := range n {
		name := fmt.Sprintf("%s-%d", prefix, i)
		rl := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse("8Gi"),
			corev1.ResourcePods: resource.MustParse("110")}
		node := &corev1.Node{
			ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{corev1.LabelHostname: name, "sched-test": prefix}},
			Status: corev1.NodeStatus{Capacity: rl, Allocatable: rl, Conditions: []corev1.NodeCondition{
				{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady"}}},
		}
		if _, err := cs.CoreV1().Nodes().Create(context.Background(), node, metav1.CreateOptions{}); err != nil {
			t.Fatalf("create node %s: %v", name, err)
		}
		names = append(names, name)
		t.Cleanup(func() {
			if err := cs.CoreV1().Nodes().Delete(context.Background(), name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
				t.Logf("cleanup: delete node %s: %v", name, err)
			}
		})
	}
	return names
}

// schedPod is a pod pinned by nodeSelector to the nodes of prefix.
func schedPod(ns, name, prefix, cpu string, labels map[string]string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels},
		Spec: corev1.PodSpec{
			NodeSelector:                  map[string]string{"sched-test": prefix},
			TerminationGracePeriodSeconds: ptr.To[int64](0),
			Containers: []corev1.Container{{Name: "c", Image: "docker.io/library/busybox:1.36",
				Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)}}}},
		},
	}
}

func schedCreate(t *testing.T, cs kubernetes.Interface, p *corev1.Pod) {
	t.Helper()
	if _, err := cs.CoreV1().Pods(p.Namespace).Create(context.Background(), p, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create pod %s: %v", p.Name, err)
	}
}

// schedWait polls (test-side only) until cond holds for the pod.
func schedWait(t *testing.T, cs kubernetes.Interface, ns, name, what string, cond func(*corev1.Pod) bool) *corev1.Pod {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		p, err := cs.CoreV1().Pods(ns).Get(context.Background(), name, metav1.GetOptions{})
		if err == nil && cond(p) {
			return p
		}
		if time.Now().After(deadline) {
			nodes, _ := cs.CoreV1().Nodes().List(context.Background(), metav1.ListOptions{})
			for _, n := range nodes.Items {
				t.Logf("node %s taints %v conditions %v", n.Name, n.Spec.Taints, n.Status.Conditions)
			}
			t.Fatalf("pod %s/%s: timed out waiting for %s (last: %v %+v)", ns, name, what, err, p.Status)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func schedBound(p *corev1.Pod) bool { return p.Spec.NodeName != "" }

func schedSpread(t *testing.T, cs kubernetes.Interface, ns string) {
	nodes := schedNodes(t, cs, "spread", 3, "4")
	for i := range 6 {
		p := schedPod(ns, fmt.Sprintf("web-%d", i), "spread", "100m", map[string]string{"app": "web"})
		p.Spec.TopologySpreadConstraints = []corev1.TopologySpreadConstraint{{MaxSkew: 1, TopologyKey: corev1.LabelHostname,
			WhenUnsatisfiable: corev1.DoNotSchedule, LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}}}
		schedCreate(t, cs, p)
	}
	perNode := map[string]int{}
	for i := range 6 {
		perNode[schedWait(t, cs, ns, fmt.Sprintf("web-%d", i), "bound", schedBound).Spec.NodeName]++
	}
	for _, n := range nodes {
		if perNode[n] != 2 {
			t.Fatalf("pods per node %v, want 2 on each of %v", perNode, nodes)
		}
	}
}

func schedAntiAffinity(t *testing.T, cs kubernetes.Interface, ns string) {
	schedNodes(t, cs, "anti", 2, "4")
	db := func(name string) *corev1.Pod {
		p := schedPod(ns, name, "anti", "100m", map[string]string{"app": "db"})
		p.Spec.Affinity = &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{
			RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{TopologyKey: corev1.LabelHostname,
				LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "db"}}}}}}
		return p
	}
	schedCreate(t, cs, db("db-0"))
	a := schedWait(t, cs, ns, "db-0", "bound", schedBound)
	schedCreate(t, cs, db("db-1"))
	b := schedWait(t, cs, ns, "db-1", "bound", schedBound)
	if a.Spec.NodeName == b.Spec.NodeName {
		t.Fatalf("both db pods on %s", a.Spec.NodeName)
	}
	schedCreate(t, cs, db("db-2"))
	// Other subtests' nodes (none left) and this one's 2: all nodes are these two.
	want := "node(s) didn't match pod anti-affinity rules"
	p := schedWait(t, cs, ns, "db-2", "Unschedulable", func(p *corev1.Pod) bool {
		c := schedCondition(p)
		return c != nil && c.Reason == corev1.PodReasonUnschedulable && strings.Contains(c.Message, want)
	})
	if p.Spec.NodeName != "" {
		t.Fatalf("db-2 bound to %s", p.Spec.NodeName)
	}
	// Freeing a node (pod deletion) requeues it: no polling.
	if err := cs.CoreV1().Pods(ns).Delete(context.Background(), "db-0", metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}); err != nil {
		t.Fatal(err)
	}
	if got := schedWait(t, cs, ns, "db-2", "bound", schedBound).Spec.NodeName; got != a.Spec.NodeName {
		t.Fatalf("db-2 on %s, want %s (freed)", got, a.Spec.NodeName)
	}
}

func schedOversized(t *testing.T, cs kubernetes.Interface, ns string) {
	schedNodes(t, cs, "big", 2, "2")
	p := schedPod(ns, "huge", "big", "8", nil)
	p.Spec.NodeSelector = nil
	schedCreate(t, cs, p)
	got := schedWait(t, cs, ns, "huge", "Unschedulable", func(p *corev1.Pod) bool {
		c := schedCondition(p)
		return c != nil && c.Status == corev1.ConditionFalse && c.Reason == corev1.PodReasonUnschedulable
	})
	msg := schedCondition(got).Message
	want := "0/2 nodes are available: 2 Insufficient cpu. preemption: 0/2 nodes are available: 2 No preemption victims found for incoming pod."
	if msg != want {
		t.Fatalf("message %q\nwant    %q", msg, want)
	}
	deadline := time.Now().Add(30 * time.Second)
	for !schedHasEvent(t, cs, ns, "huge", "FailedScheduling", want) {
		if time.Now().After(deadline) {
			t.Fatal("no FailedScheduling event")
		}
		time.Sleep(100 * time.Millisecond)
	}
	if p := schedWait(t, cs, ns, "huge", "still pending", func(*corev1.Pod) bool { return true }); p.Status.Phase != corev1.PodPending || p.Spec.NodeName != "" {
		t.Fatalf("phase %s node %q", p.Status.Phase, p.Spec.NodeName)
	}
}

func schedPreemption(t *testing.T, cs kubernetes.Interface, ns string) {
	ctx := context.Background()
	nodes := schedNodes(t, cs, "pre", 1, "2")
	schedCreate(t, cs, schedPod(ns, "low", "pre", "1500m", map[string]string{"app": "low"}))
	schedWait(t, cs, ns, "low", "bound", schedBound)
	pc := &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: "sched-it-high"}, Value: 1000}
	if _, err := cs.SchedulingV1().PriorityClasses().Create(ctx, pc, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.SchedulingV1().PriorityClasses().Delete(ctx, pc.Name, metav1.DeleteOptions{}) })
	high := schedPod(ns, "high", "pre", "1", nil)
	high.Spec.PriorityClassName = pc.Name
	schedCreate(t, cs, high)
	got := schedWait(t, cs, ns, "high", "nominated and bound", func(p *corev1.Pod) bool {
		return p.Status.NominatedNodeName == nodes[0] && p.Spec.NodeName == nodes[0]
	})
	if _, err := cs.CoreV1().Pods(ns).Get(ctx, "low", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("low pod still there: %v", err)
	}
	if !schedHasEvent(t, cs, ns, "low", "Preempted", fmt.Sprintf("Preempted by pod %s on node %s", got.UID, nodes[0])) {
		t.Fatal("no Preempted event on the victim")
	}
}

func schedCondition(p *corev1.Pod) *corev1.PodCondition {
	for i := range p.Status.Conditions {
		if p.Status.Conditions[i].Type == corev1.PodScheduled {
			return &p.Status.Conditions[i]
		}
	}
	return nil
}

func schedHasEvent(t *testing.T, cs kubernetes.Interface, ns, pod, reason, msg string) bool {
	t.Helper()
	evs, err := cs.CoreV1().Events(ns).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range evs.Items {
		if e.InvolvedObject.Name == pod && e.Reason == reason && e.Message == msg {
			return true
		}
	}
	return false
}
