package nodelifecycle

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

func nodeWith(ready corev1.ConditionStatus, extra ...corev1.NodeCondition) *corev1.Node {
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1"}}
	n.Status.Conditions = append([]corev1.NodeCondition{{Type: corev1.NodeReady, Status: ready}}, extra...)
	return n
}

func keys(ts []corev1.Taint) []string {
	var out []string
	for _, t := range ts {
		out = append(out, t.Key+":"+string(t.Effect))
	}
	return out
}

func TestDesiredTaints(t *testing.T) {
	cases := []struct {
		name string
		node *corev1.Node
		want []string
	}{
		{"ready", nodeWith(corev1.ConditionTrue), nil},
		{"not ready", nodeWith(corev1.ConditionFalse), []string{"node.kubernetes.io/not-ready:NoSchedule", "node.kubernetes.io/not-ready:NoExecute"}},
		{"unknown", nodeWith(corev1.ConditionUnknown), []string{"node.kubernetes.io/unreachable:NoSchedule", "node.kubernetes.io/unreachable:NoExecute"}},
		{"memory pressure", nodeWith(corev1.ConditionTrue, corev1.NodeCondition{Type: corev1.NodeMemoryPressure, Status: corev1.ConditionTrue}),
			[]string{"node.kubernetes.io/memory-pressure:NoSchedule"}},
		{"cordoned", func() *corev1.Node { n := nodeWith(corev1.ConditionTrue); n.Spec.Unschedulable = true; return n }(),
			[]string{"node.kubernetes.io/unschedulable:NoSchedule"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := keys(desiredTaints(c.node))
			if len(got) != len(c.want) {
				t.Fatalf("got %v, want %v", got, c.want)
			}
			for i := range got {
				if got[i] != c.want[i] {
					t.Fatalf("got %v, want %v", got, c.want)
				}
			}
		})
	}
}

func TestMergeTaintsKeepsOthersAndTime(t *testing.T) {
	old := metav1.NewTime(time.Unix(100, 0))
	cur := []corev1.Taint{{Key: "user", Value: "x", Effect: corev1.TaintEffectNoSchedule},
		{Key: corev1.TaintNodeUnreachable, Effect: corev1.TaintEffectNoExecute, TimeAdded: &old},
		{Key: corev1.TaintNodeNotReady, Effect: corev1.TaintEffectNoSchedule}}
	want := []corev1.Taint{taint(corev1.TaintNodeUnreachable, corev1.TaintEffectNoExecute)}
	got, changed := mergeTaints(cur, want, time.Unix(200, 0))
	if !changed || len(got) != 2 || got[0].Key != "user" || !got[1].TimeAdded.Equal(&old) {
		t.Fatalf("got %+v changed=%v", got, changed)
	}
	if _, changed := mergeTaints(got, want, time.Unix(300, 0)); changed {
		t.Fatal("a second merge changed something")
	}
	got, _ = mergeTaints(nil, []corev1.Taint{taint(corev1.TaintNodeNotReady, corev1.TaintEffectNoExecute)}, time.Unix(300, 0))
	if got[0].TimeAdded == nil || got[0].TimeAdded.Unix() != 300 {
		t.Fatalf("NoExecute taint without timeAdded: %+v", got)
	}
}

func TestEvictionTime(t *testing.T) {
	now := time.Unix(1000, 0)
	added := metav1.NewTime(time.Unix(900, 0))
	unreachable := []corev1.Taint{{Key: corev1.TaintNodeUnreachable, Effect: corev1.TaintEffectNoExecute, TimeAdded: &added}}
	tol := func(secs *int64) []corev1.Toleration {
		return []corev1.Toleration{{Key: corev1.TaintNodeUnreachable, Operator: corev1.TolerationOpExists,
			Effect: corev1.TaintEffectNoExecute, TolerationSeconds: secs}}
	}
	cases := []struct {
		name   string
		tols   []corev1.Toleration
		taints []corev1.Taint
		evict  bool
		at     time.Time
	}{
		{"no taints", nil, nil, false, time.Time{}},
		{"untolerated", nil, unreachable, true, now},
		{"300s from timeAdded", tol(ptr.To[int64](300)), unreachable, true, time.Unix(1200, 0)},
		{"forever", tol(nil), unreachable, false, time.Time{}},
		{"negative is now", tol(ptr.To[int64](-5)), unreachable, true, time.Unix(900, 0)},
		{"NoSchedule ignored", nil, []corev1.Taint{{Key: "k", Effect: corev1.TaintEffectNoSchedule}}, false, time.Time{}},
		{"tolerate all", []corev1.Toleration{{Operator: corev1.TolerationOpExists}}, unreachable, false, time.Time{}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := &corev1.Pod{Spec: corev1.PodSpec{Tolerations: c.tols}}
			at, evict := evictionTime(p, c.taints, now)
			if evict != c.evict || (evict && !at.Equal(c.at)) {
				t.Fatalf("got %v %v, want %v %v", at, evict, c.at, c.evict)
			}
		})
	}
}
