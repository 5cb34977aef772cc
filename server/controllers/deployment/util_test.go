package deployment

import (
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
)

// TestResolveFenceposts: surge rounds up, unavailable rounds down, and
// both zero means one unavailable (upstream's ResolveFenceposts).
func TestResolveFenceposts(t *testing.T) {
	cases := []struct {
		surge, unavail intstr.IntOrString
		desired        int32
		wantS, wantU   int32
	}{
		{intstr.FromString("25%"), intstr.FromString("25%"), 10, 3, 2},
		{intstr.FromString("25%"), intstr.FromString("25%"), 3, 1, 0},
		{intstr.FromString("50%"), intstr.FromString("50%"), 3, 2, 1},
		{intstr.FromInt32(1), intstr.FromInt32(0), 3, 1, 0},
		{intstr.FromInt32(0), intstr.FromInt32(0), 3, 0, 1},
		{intstr.FromString("0%"), intstr.FromString("10%"), 5, 0, 1},
		{intstr.FromString("100%"), intstr.FromString("0%"), 0, 0, 1},
	}
	for _, c := range cases {
		s, u, err := resolveFenceposts(&c.surge, &c.unavail, c.desired)
		if err != nil || s != c.wantS || u != c.wantU {
			t.Errorf("surge %s unavailable %s of %d: got %d/%d (%v), want %d/%d", c.surge.String(), c.unavail.String(), c.desired, s, u, err, c.wantS, c.wantU)
		}
	}
}

func TestComputeHash(t *testing.T) {
	tmpl := &corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx:1.25"}}}}
	h := ComputeHash(tmpl, nil)
	if h != ComputeHash(tmpl.DeepCopy(), nil) {
		t.Fatal("hash not deterministic")
	}
	if h == ComputeHash(tmpl, ptr.To[int32](1)) {
		t.Fatal("collisionCount does not change the hash")
	}
	other := tmpl.DeepCopy()
	other.Spec.Containers[0].Image = "nginx:1.26"
	if h == ComputeHash(other, nil) {
		t.Fatal("template change does not change the hash")
	}
	if strings.Trim(h, "bcdfghjklmnpqrstvwxz2456789") != "" || len(h) < 6 || len(h) > 10 {
		t.Fatalf("hash %q not in SafeEncodeString's alphabet", h)
	}
}

// TestRevisionAnnotations: a bumped revision moves the old one into the
// history; the Deployment's own annotations are copied, the skipped not.
func TestRevisionAnnotations(t *testing.T) {
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{"team": "a",
		corev1.LastAppliedConfigAnnotation: "{}", RevisionAnnotation: "9"}},
		Spec: appsv1.DeploymentSpec{Replicas: ptr.To[int32](4), Strategy: appsv1.DeploymentStrategy{
			Type:          appsv1.RollingUpdateDeploymentStrategyType,
			RollingUpdate: &appsv1.RollingUpdateDeployment{MaxSurge: ptr.To(intstr.FromString("25%")), MaxUnavailable: ptr.To(intstr.FromString("25%"))}}}}
	rs := &appsv1.ReplicaSet{}
	if !setNewRSAnnotations(d, rs, 1, false) {
		t.Fatal("no change reported")
	}
	want := map[string]string{"team": "a", RevisionAnnotation: "1", DesiredReplicasAnnotation: "4", MaxReplicasAnnotation: "5"}
	for k, v := range want {
		if rs.Annotations[k] != v {
			t.Errorf("%s = %q, want %q", k, rs.Annotations[k], v)
		}
	}
	if _, ok := rs.Annotations[corev1.LastAppliedConfigAnnotation]; ok {
		t.Error("last-applied copied")
	}
	setNewRSAnnotations(d, rs, 3, true)
	setNewRSAnnotations(d, rs, 5, true)
	if rs.Annotations[RevisionAnnotation] != "5" || rs.Annotations[RevisionHistoryAnnotation] != "1,3" {
		t.Fatalf("revision %q history %q", rs.Annotations[RevisionAnnotation], rs.Annotations[RevisionHistoryAnnotation])
	}
}

// TestNewRSNewReplicas: the new ReplicaSet grows only within maxSurge, and
// an old one counts with the pods it still has.
func TestNewRSNewReplicas(t *testing.T) {
	d := &appsv1.Deployment{Spec: appsv1.DeploymentSpec{Replicas: ptr.To[int32](3), Strategy: appsv1.DeploymentStrategy{
		Type:          appsv1.RollingUpdateDeploymentStrategyType,
		RollingUpdate: &appsv1.RollingUpdateDeployment{MaxSurge: ptr.To(intstr.FromInt32(1)), MaxUnavailable: ptr.To(intstr.FromInt32(0))}}}}
	rs := func(spec, status int32) *appsv1.ReplicaSet {
		return &appsv1.ReplicaSet{Spec: appsv1.ReplicaSetSpec{Replicas: ptr.To(spec)}, Status: appsv1.ReplicaSetStatus{Replicas: status}}
	}
	cases := []struct {
		old, newRS *appsv1.ReplicaSet
		want       int32
	}{
		{rs(3, 3), rs(0, 0), 1},
		{rs(2, 2), rs(1, 1), 2},
		{rs(2, 3), rs(1, 1), 1}, // the old one has not deleted its pod yet
		{rs(0, 0), rs(2, 2), 3},
	}
	for i, c := range cases {
		got, err := newRSNewReplicas(d, []*appsv1.ReplicaSet{c.old, c.newRS}, c.newRS)
		if err != nil || got != c.want {
			t.Errorf("case %d: %d (%v), want %d", i, got, err, c.want)
		}
	}
}
