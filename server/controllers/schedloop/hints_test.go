package schedloop

import (
	"context"
	"testing"

	"go.uber.org/zap/zaptest"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/utils/ptr"

	"github.com/orch/orch/server/controllers/kit"
)

func TestNodeSchedulingChanged(t *testing.T) {
	base := node("n", "2")
	tests := []struct {
		name string
		mod  func(*corev1.Node)
		want bool
	}{
		{"heartbeat only", func(n *corev1.Node) { n.Status.Conditions[0].LastHeartbeatTime = metav1.Now() }, false},
		{"labels", func(n *corev1.Node) { n.Labels = map[string]string{"zone": "a"} }, true},
		{"taint", func(n *corev1.Node) { n.Spec.Taints = []corev1.Taint{{Key: "k", Effect: corev1.TaintEffectNoSchedule}} }, true},
		{"cordon", func(n *corev1.Node) { n.Spec.Unschedulable = true }, true},
		{"allocatable", func(n *corev1.Node) { n.Status.Allocatable[corev1.ResourceCPU] = resource.MustParse("4") }, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			n := base.DeepCopy()
			tc.mod(n)
			if got := nodeSchedulingChanged(base, n); got != tc.want {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
		})
	}
}

func TestHintsFor(t *testing.T) {
	plain := pod("p", "1")
	affine := plain.DeepCopy()
	affine.Spec.Affinity = &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{}}
	claims := plain.DeepCopy()
	claims.Spec.Volumes = []corev1.Volume{{Name: "d", VolumeSource: corev1.VolumeSource{
		PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "d"}}}}
	prio := plain.DeepCopy()
	prio.Spec.Priority = ptr.To[int32](10)
	tests := []struct {
		name string
		pod  *corev1.Pod
		want hint
	}{
		{"plain", plain, hintNode | hintPodDeleted},
		{"pod affinity", affine, hintNode | hintPodDeleted | hintAssignedPod | hintNamespace},
		{"claims", claims, hintNode | hintPodDeleted | hintVolume},
		{"may preempt", prio, hintNode | hintPodDeleted | hintPDB},
	}
	for _, tc := range tests {
		if got := hintsFor(tc.pod); got != tc.want {
			t.Errorf("%s: got %b, want %b", tc.name, got, tc.want)
		}
	}
}

// registered builds a run over a fake clientset holding objs, caches synced.
func registered(t *testing.T, objs ...runtime.Object) *run {
	t.Helper()
	client := fake.NewClientset(objs...)
	kc := kit.New(client, zaptest.NewLogger(t), kit.Options{})
	c, err := NewShared(kc)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(func() { cancel(); kc.Shutdown() })
	if err := kc.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if !kit.WaitForSync(ctx, c.reg.synced...) {
		t.Fatal("caches did not sync")
	}
	return c.reg
}

func labelled(name string, ready bool, kv ...string) *corev1.Pod {
	p := pod(name, "100m")
	p.Labels = map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		p.Labels[kv[i]] = kv[i+1]
	}
	st := corev1.ConditionFalse
	if ready {
		st = corev1.ConditionTrue
	}
	p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: st}}
	return p
}

func TestPDBDisruptionsAllowed(t *testing.T) {
	pdb := func(name string, minAvail, maxUnavail *intstr.IntOrString, observed int64, allowed int32) *policyv1.PodDisruptionBudget {
		return &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name},
			Spec: policyv1.PodDisruptionBudgetSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
				MinAvailable: minAvail, MaxUnavailable: maxUnavail},
			Status: policyv1.PodDisruptionBudgetStatus{ObservedGeneration: observed, DisruptionsAllowed: allowed}}
	}
	tests := []struct {
		name string
		pdb  *policyv1.PodDisruptionBudget
		want int32
	}{
		{"minAvailable 1 of 2 ready", pdb("a", ptr.To(intstr.FromInt32(1)), nil, 0, 0), 1},
		{"minAvailable 50% of 3 (2 needed, 2 ready)", pdb("b", ptr.To(intstr.FromString("50%")), nil, 0, 0), 0},
		{"maxUnavailable 1 of 3 (2 ready)", pdb("c", nil, ptr.To(intstr.FromInt32(1)), 0, 0), 0},
		{"maxUnavailable 2 of 3", pdb("d", nil, ptr.To(intstr.FromInt32(2)), 0, 0), 1},
		{"status maintained by a controller", pdb("e", ptr.To(intstr.FromInt32(1)), nil, 1, 5), 5},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := registered(t, tc.pdb, labelled("w1", true, "app", "web"), labelled("w2", true, "app", "web"),
				labelled("w3", false, "app", "web"), labelled("x", true, "app", "db"))
			got, err := r.pdbs()
			if err != nil || len(got) != 1 || got[0].DisruptionsAllowed != tc.want {
				t.Fatalf("got %+v %v, want allowed %d", got, err, tc.want)
			}
		})
	}
}

func TestDefaultSpreadSelector(t *testing.T) {
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web"},
		Spec: corev1.ServiceSpec{Selector: map[string]string{"app": "web"}}}
	rs := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web-1"},
		Spec: appsv1.ReplicaSetSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web", "hash": "1"}}}}
	r := registered(t, svc, rs)
	tests := []struct {
		name string
		pod  *corev1.Pod
		want string
	}{
		{"service and replicaset", labelled("a", true, "app", "web", "hash", "1"), "app=web,app=web,hash=1"},
		{"service only", labelled("b", true, "app", "web"), "app=web"},
		{"nothing selects it", labelled("c", true, "app", "db"), ""},
	}
	for _, tc := range tests {
		if got := r.defaultSpreadSelector(tc.pod).String(); got != tc.want {
			t.Errorf("%s: got %q, want %q", tc.name, got, tc.want)
		}
	}
}
