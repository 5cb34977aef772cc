package node

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestParseLabelsAndTaints(t *testing.T) {
	for _, tc := range []struct {
		in      []string
		wantErr bool
	}{
		{[]string{"a=b", "example.com/role=edge"}, false},
		{[]string{"novalue"}, true},
		{[]string{"bad key=x"}, true},
	} {
		_, err := ParseLabels(tc.in)
		if (err != nil) != tc.wantErr {
			t.Errorf("ParseLabels(%v) error %v", tc.in, err)
		}
	}
	for _, tc := range []struct {
		in      string
		want    corev1.Taint
		wantErr bool
	}{
		{"dedicated=gpu:NoSchedule", corev1.Taint{Key: "dedicated", Value: "gpu", Effect: corev1.TaintEffectNoSchedule}, false},
		{"edge:NoExecute", corev1.Taint{Key: "edge", Effect: corev1.TaintEffectNoExecute}, false},
		{"a=b", corev1.Taint{}, true},
		{"a=b:Sometimes", corev1.Taint{}, true},
	} {
		got, err := ParseTaints([]string{tc.in})
		if (err != nil) != tc.wantErr || (err == nil && got[0] != tc.want) {
			t.Errorf("ParseTaints(%q) = %v, %v", tc.in, got, err)
		}
	}
}

func TestAllocatable(t *testing.T) {
	capacity := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4"), corev1.ResourceMemory: resource.MustParse("100Mi"),
		corev1.ResourcePods: resource.MustParse("110")}
	got := Allocatable(capacity, Reservation)
	if c := got[corev1.ResourceCPU]; c.MilliValue() != 3900 {
		t.Errorf("cpu %s", c.String())
	}
	if m := got[corev1.ResourceMemory]; m.Value() != 0 {
		t.Errorf("memory %s, want 0 (never negative)", m.String())
	}
	if p := got[corev1.ResourcePods]; p.Value() != 110 {
		t.Errorf("pods %s", p.String())
	}
}

func TestConditionsKeepTransitionTime(t *testing.T) {
	t0 := metav1.NewTime(time.Now().Add(-time.Hour).Truncate(time.Second))
	old := Conditions(nil, Health{}, t0)
	now := metav1.NewTime(time.Now().Truncate(time.Second))
	same := Conditions(old, Health{}, now)
	for _, c := range same {
		if !c.LastTransitionTime.Equal(&t0) || !c.LastHeartbeatTime.Equal(&now) {
			t.Errorf("%s: transition %v heartbeat %v", c.Type, c.LastTransitionTime, c.LastHeartbeatTime)
		}
	}
	changed := Conditions(old, Health{MemoryPressure: true}, now)
	for _, c := range changed {
		if c.Type == corev1.NodeMemoryPressure && (c.Status != corev1.ConditionTrue || !c.LastTransitionTime.Equal(&now)) {
			t.Errorf("memory pressure %+v", c)
		}
	}
	if sameConditions(old, changed) || !sameConditions(old, same) {
		t.Error("sameConditions wrong")
	}
}

func TestBuild(t *testing.T) {
	n := Build(Config{Name: "n1", Labels: map[string]string{"x": "y"}, KubeletPort: 10250, KubeletVersion: "v1.37.1"})
	if n.Labels[corev1.LabelHostname] != "n1" || n.Labels["x"] != "y" || n.Labels[corev1.LabelOSStable] != "linux" {
		t.Errorf("labels %v", n.Labels)
	}
	if n.Status.NodeInfo.KubeletVersion != "v1.37.1" || n.Status.DaemonEndpoints.KubeletEndpoint.Port != 10250 {
		t.Errorf("status %+v", n.Status)
	}
}
