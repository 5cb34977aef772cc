package fieldmanager

import (
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes/scheme"
)

func createCorpus() []runtime.Object {
	om := metav1.ObjectMeta{Name: "a", Namespace: "ns", Labels: map[string]string{"app": "x"}, Annotations: map[string]string{"n": "1"}}
	pod := corev1.PodSpec{
		Containers: []corev1.Container{{Name: "c", Image: "busybox", Command: []string{"sh"},
			Ports:        []corev1.ContainerPort{{ContainerPort: 80, Protocol: corev1.ProtocolTCP}, {ContainerPort: 53, Protocol: corev1.ProtocolUDP}},
			Env:          []corev1.EnvVar{{Name: "A", Value: "1"}, {Name: "A", Value: "2"}}, // duplicates: allowed
			Resources:    corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}},
			VolumeMounts: []corev1.VolumeMount{{Name: "v", MountPath: "/v"}}}},
		Volumes:     []corev1.Volume{{Name: "v", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}},
		Tolerations: []corev1.Toleration{{Key: "k", Operator: corev1.TolerationOpExists}},
	}
	replicas := int32(2)
	return []runtime.Object{
		&corev1.ConfigMap{ObjectMeta: om, Data: map[string]string{"k": "v"}},
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "only-a-name"}},
		&corev1.Secret{ObjectMeta: om, Type: corev1.SecretTypeOpaque, Data: map[string][]byte{"p": []byte("x")}},
		&corev1.Pod{ObjectMeta: om, Spec: pod, Status: corev1.PodStatus{Phase: corev1.PodPending}},
		&corev1.Service{ObjectMeta: om, Spec: corev1.ServiceSpec{Selector: map[string]string{"app": "x"},
			Ports: []corev1.ServicePort{{Name: "http", Port: 80, TargetPort: intstr.FromInt32(8080), Protocol: corev1.ProtocolTCP}}}},
		&appsv1.Deployment{ObjectMeta: om, Spec: appsv1.DeploymentSpec{Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "x"}},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "x"}}, Spec: pod}}},
		&appsv1.StatefulSet{ObjectMeta: om, Spec: appsv1.StatefulSetSpec{ServiceName: "s",
			Selector:             &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "app", Operator: "In", Values: []string{"x"}}}},
			VolumeClaimTemplates: []corev1.PersistentVolumeClaim{{ObjectMeta: metav1.ObjectMeta{Name: "d"}}}}},
		&networkingv1.NetworkPolicy{ObjectMeta: om, Spec: networkingv1.NetworkPolicySpec{PolicyTypes: []networkingv1.PolicyType{"Ingress"},
			Ingress: []networkingv1.NetworkPolicyIngressRule{{From: []networkingv1.NetworkPolicyPeer{{PodSelector: &metav1.LabelSelector{}}}}}}},
		&rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "r"}, Rules: []rbacv1.PolicyRule{{Verbs: []string{"get"}, APIGroups: []string{""}, Resources: []string{"pods"}}}},
		&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n", OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "X", Name: "o", UID: "u"}}},
			Status: corev1.NodeStatus{Addresses: []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "10.0.0.1"}}}},
	}
}

// TestTrackCreateMatchesUpstream: the create fast path writes exactly the
// managedFields upstream's general Update from an empty object writes.
func TestTrackCreateMatchesUpstream(t *testing.T) {
	m := New(scheme.Scheme)
	for _, obj := range createCorpus() {
		gvks, _, err := scheme.Scheme.ObjectKinds(obj)
		if err != nil {
			t.Fatal(err)
		}
		obj.GetObjectKind().SetGroupVersionKind(gvks[0])
		fm, err := m.For(gvks[0], "", false, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		live, _ := scheme.Scheme.New(gvks[0])
		live.GetObjectKind().SetGroupVersionKind(gvks[0])
		want := fm.UpdateNoErrors(live, obj.DeepCopyObject(), "mgr")
		got := obj.DeepCopyObject()
		if !m.TrackCreate(got, "mgr", time.Now()) {
			t.Fatalf("%s: fast path refused", gvks[0].Kind)
		}
		w, g := entries(t, want), entries(t, got)
		if !apiequality.Semantic.DeepEqual(w, g) {
			t.Errorf("%s:\n got %s\nwant %s", gvks[0].Kind, fields(g), fields(w))
		}
	}
}

func TestTrackCreateDefersToUpstream(t *testing.T) {
	m := New(scheme.Scheme)
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "a", ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "other"}}}}
	cm.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("ConfigMap"))
	if m.TrackCreate(cm, "mgr", time.Now()) || cm.ManagedFields[0].Manager != "other" {
		t.Fatalf("a body with managedFields must take the general path: %+v", cm.ManagedFields)
	}
}

// entries are obj's managedFields without their times.
func entries(t *testing.T, obj runtime.Object) []metav1.ManagedFieldsEntry {
	acc, err := meta.Accessor(obj)
	if err != nil {
		t.Fatal(err)
	}
	out := acc.GetManagedFields()
	for i := range out {
		if out[i].Time == nil {
			t.Errorf("entry %d has no time", i)
		}
		out[i].Time = nil
	}
	return out
}

func fields(es []metav1.ManagedFieldsEntry) string {
	s := ""
	for _, e := range es {
		s += e.Manager + " " + string(e.Operation) + " " + e.APIVersion + " "
		if e.FieldsV1 != nil {
			s += string(e.FieldsV1.Raw)
		}
		s += "; "
	}
	return s
}

func benchConfigMap() *corev1.ConfigMap {
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "a", Namespace: "ns", Labels: map[string]string{"app": "x"}},
		Data: map[string]string{"payload": string(make([]byte, 1024))}}
	cm.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("ConfigMap"))
	return cm
}

func BenchmarkCreateFields(b *testing.B) {
	m := New(scheme.Scheme)
	gvk := corev1.SchemeGroupVersion.WithKind("ConfigMap")
	fm, err := m.For(gvk, "", false, nil, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("upstream", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			live := &corev1.ConfigMap{}
			live.SetGroupVersionKind(gvk)
			fm.UpdateNoErrors(live, benchConfigMap(), "mgr")
		}
	})
	b.Run("TrackCreate", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			m.TrackCreate(benchConfigMap(), "mgr", time.Now())
		}
	})
}
