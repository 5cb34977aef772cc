package quota

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
)

func ctr(name, cpu string) corev1.Container {
	rl := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)}
	return corev1.Container{Name: name, Resources: corev1.ResourceRequirements{Requests: rl, Limits: rl}}
}

func TestPodRequests(t *testing.T) {
	always := corev1.ContainerRestartPolicyAlways
	sidecar := ctr("side", "100m")
	sidecar.RestartPolicy = &always
	cases := []struct {
		name string
		spec corev1.PodSpec
		want string
	}{
		{"sum of containers", corev1.PodSpec{Containers: []corev1.Container{ctr("a", "100m"), ctr("b", "200m")}}, "300m"},
		{"big init wins", corev1.PodSpec{InitContainers: []corev1.Container{ctr("i", "1")}, Containers: []corev1.Container{ctr("a", "100m")}}, "1"},
		{"sidecar adds", corev1.PodSpec{InitContainers: []corev1.Container{sidecar}, Containers: []corev1.Container{ctr("a", "100m")}}, "200m"},
		{"overhead", corev1.PodSpec{Containers: []corev1.Container{ctr("a", "100m")}, Overhead: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("50m")}}, "150m"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := PodRequests(&corev1.Pod{Spec: c.spec}, false)[corev1.ResourceCPU]
			if want := resource.MustParse(c.want); got.Cmp(want) != 0 {
				t.Fatalf("got %s want %s", got.String(), c.want)
			}
		})
	}
}

func TestUsageAndCheck(t *testing.T) {
	svc := &corev1.Service{Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeNodePort, Ports: []corev1.ServicePort{{Port: 80}, {Port: 443}}}}
	u := Usage(schema.GroupResource{Resource: "services"}, svc)
	if n := u[ServicesNodePorts]; n.Value() != 2 {
		t.Fatalf("nodeports %v", u)
	}
	if n := u["count/services"]; n.Value() != 1 {
		t.Fatalf("count %v", u)
	}
	for gr, obj := range map[schema.GroupResource]any{{Resource: "replicationcontrollers"}: &corev1.ReplicationController{},
		{Resource: "resourcequotas"}: &corev1.ResourceQuota{}} {
		name := corev1.ResourceName(gr.Resource)
		u := Usage(gr, obj)
		if n, c := u[name], u[CountName(gr)]; n.Value() != 1 || c.Value() != 1 {
			t.Fatalf("%s usage %v", gr.Resource, u)
		}
	}
	done := &corev1.Pod{Status: corev1.PodStatus{Phase: corev1.PodSucceeded}}
	if len(Usage(schema.GroupResource{Resource: "pods"}, done)) != 0 {
		t.Fatal("a terminal pod consumes quota")
	}
	q := &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Name: "q"}, Spec: corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{
		ServicesNodePorts: resource.MustParse("2")}}, Status: corev1.ResourceQuotaStatus{Used: corev1.ResourceList{ServicesNodePorts: resource.MustParse("1")}}}
	_, err := Check(q, svc, u)
	want := "exceeded quota: q, requested: services.nodeports=2, used: services.nodeports=1, limited: services.nodeports=2"
	if err == nil || err.Error() != want {
		t.Fatalf("got %v", err)
	}
}

func TestScopes(t *testing.T) {
	be := &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "a"}}}}
	burst := &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{ctr("a", "1")}, ActiveDeadlineSeconds: ptr.To[int64](10)}}
	q := func(s ...corev1.ResourceQuotaScope) *corev1.ResourceQuota {
		return &corev1.ResourceQuota{Spec: corev1.ResourceQuotaSpec{Scopes: s}}
	}
	if !Matches(q(corev1.ResourceQuotaScopeBestEffort), be) || Matches(q(corev1.ResourceQuotaScopeBestEffort), burst) {
		t.Fatal("BestEffort scope")
	}
	if !Matches(q(corev1.ResourceQuotaScopeTerminating), burst) || Matches(q(corev1.ResourceQuotaScopeTerminating), be) {
		t.Fatal("Terminating scope")
	}
	if Matches(q(corev1.ResourceQuotaScopeBestEffort), &corev1.ConfigMap{}) {
		t.Fatal("a scoped quota matched a configmap")
	}
}

func TestLimitRangeDefaultsAndRatio(t *testing.T) {
	lr := &corev1.LimitRange{Spec: corev1.LimitRangeSpec{Limits: []corev1.LimitRangeItem{{Type: corev1.LimitTypeContainer,
		Max:                  corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("1Gi")},
		MaxLimitRequestRatio: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("2")}}}}}
	p := &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "a", Resources: corev1.ResourceRequirements{
		Requests: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("100Mi")}}}}}}
	DefaultPod(p, []*corev1.LimitRange{lr})
	if l := p.Spec.Containers[0].Resources.Limits[corev1.ResourceMemory]; l.String() != "1Gi" {
		t.Fatalf("default limit from max: %v", l.String())
	}
	err := ValidatePod(p, []*corev1.LimitRange{lr})
	if err == nil || err.Error() != "memory max limit to request ratio per Container is 2, but provided ratio is 10.240000" {
		t.Fatalf("got %v", err)
	}
}

// TestUsageFromMetadata: count-only resources are counted from metadata
// alone, with their legacy names; pods, services and claims read specs.
func TestUsageFromMetadata(t *testing.T) {
	obj := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Name: "x", Namespace: "ns"}}
	for gr, want := range map[schema.GroupResource][]corev1.ResourceName{
		{Resource: "configmaps"}:                 {ConfigMaps, "count/configmaps"},
		{Resource: "secrets"}:                    {Secrets, "count/secrets"},
		{Resource: "replicationcontrollers"}:     {replicationControllers, "count/replicationcontrollers"},
		{Resource: "podtemplates"}:               {"count/podtemplates"},
		{Group: "apps", Resource: "deployments"}: {"count/deployments.apps"},
	} {
		if !CountOnly(gr) {
			t.Errorf("%s: not count-only", gr)
		}
		u := Usage(gr, obj)
		if len(u) != len(want) {
			t.Errorf("%s: usage %v, want %v", gr, u, want)
		}
		for _, n := range want {
			if v := u[n]; v.Value() != 1 {
				t.Errorf("%s: %s = %v, want 1", gr, n, v.String())
			}
		}
	}
	for _, r := range []string{"pods", "services", "persistentvolumeclaims"} {
		if CountOnly(schema.GroupResource{Resource: r}) {
			t.Errorf("%s: count-only, but its usage reads the spec", r)
		}
	}
}
