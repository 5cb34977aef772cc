package replicaset

import (
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

type podOpt func(*corev1.Pod)

func mkPod(name string, opts ...podOpt) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns",
		CreationTimestamp: metav1.NewTime(time.Unix(1000, 0))},
		Spec: corev1.PodSpec{NodeName: "n1"}, Status: corev1.PodStatus{Phase: corev1.PodRunning}}
	for _, o := range opts {
		o(p)
	}
	return p
}

func unassigned(p *corev1.Pod) { p.Spec.NodeName = "" }
func phase(ph corev1.PodPhase) podOpt {
	return func(p *corev1.Pod) { p.Status.Phase = ph }
}
func readySince(t time.Time) podOpt {
	return func(p *corev1.Pod) {
		p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: metav1.NewTime(t)}}
	}
}
func created(t time.Time) podOpt {
	return func(p *corev1.Pod) { p.CreationTimestamp = metav1.NewTime(t) }
}
func restarts(n int32) podOpt {
	return func(p *corev1.Pod) { p.Status.ContainerStatuses = []corev1.ContainerStatus{{RestartCount: n}} }
}
func cost(v string) podOpt {
	return func(p *corev1.Pod) { p.Annotations = map[string]string{DeletionCostAnnotation: v} }
}

// TestDeletionOrder: the first pod of each pair goes first (upstream's order).
func TestDeletionOrder(t *testing.T) {
	now := time.Unix(100000, 0)
	old, young := now.Add(-10*time.Hour), now.Add(-time.Minute)
	cases := []struct {
		name         string
		first, other *corev1.Pod
	}{
		{"unassigned before assigned", mkPod("a", unassigned, phase(corev1.PodPending)), mkPod("b", phase(corev1.PodPending))},
		{"pending before unknown", mkPod("a", phase(corev1.PodPending)), mkPod("b", phase(corev1.PodUnknown))},
		{"unknown before running", mkPod("a", phase(corev1.PodUnknown)), mkPod("b")},
		{"not ready before ready", mkPod("a"), mkPod("b", readySince(old))},
		{"lower deletion cost first", mkPod("a", readySince(old), cost("-5")), mkPod("b", readySince(young))},
		{"ready for less time first", mkPod("a", readySince(young)), mkPod("b", readySince(old))},
		{"more restarts first", mkPod("a", readySince(old), restarts(3)), mkPod("b", readySince(old))},
		{"newer before older", mkPod("a", created(young)), mkPod("b", created(old))},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for _, pods := range [][]*corev1.Pod{{c.first, c.other}, {c.other, c.first}} {
				got := podsToDelete(pods, nil, 1, now)
				if got[0].Name != c.first.Name {
					t.Fatalf("deleted %s first, want %s", got[0].Name, c.first.Name)
				}
			}
		})
	}
}

func TestSlowStartBatch(t *testing.T) {
	var calls atomic.Int32
	ok, err := slowStartBatch(10, 1, func() error {
		if calls.Add(1) > 3 {
			return errBoom
		}
		return nil
	})
	// Batches 1, 2 succeed (3 calls), the batch of 4 fails: 3 + up to 4 calls.
	if err == nil || ok != 3 || calls.Load() != 7 {
		t.Fatalf("ok=%d calls=%d err=%v", ok, calls.Load(), err)
	}
}

func TestPodAvailable(t *testing.T) {
	now := time.Unix(1000, 0)
	p := mkPod("a", readySince(now.Add(-5*time.Second)))
	for _, c := range []struct {
		minReady int32
		want     bool
	}{{0, true}, {4, true}, {5, false}, {10, false}} {
		if got := PodAvailable(p, c.minReady, now); got != c.want {
			t.Errorf("minReadySeconds %d: available=%v", c.minReady, got)
		}
	}
	if d := nextAvailabilityCheck([]*corev1.Pod{p}, 10, now); d == nil || *d != 5*time.Second {
		t.Errorf("next check %v, want 5s", d)
	}
}
