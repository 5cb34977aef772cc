package pvbinder

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	storagelisters "k8s.io/client-go/listers/storage/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"
)

func pvOf(name, class, size string, modes ...corev1.PersistentVolumeAccessMode) *corev1.PersistentVolume {
	return &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.PersistentVolumeSpec{StorageClassName: class, AccessModes: modes,
			Capacity: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse(size)}},
		Status: corev1.PersistentVolumeStatus{Phase: corev1.VolumeAvailable}}
}

func pvcOf(class *string, size string, modes ...corev1.PersistentVolumeAccessMode) *corev1.PersistentVolumeClaim {
	return &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "c", UID: "u1"},
		Spec: corev1.PersistentVolumeClaimSpec{StorageClassName: class, AccessModes: modes,
			Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse(size)}}}}
}

func affinity(pv *corev1.PersistentVolume, key string, op corev1.NodeSelectorOperator, vals ...string) *corev1.PersistentVolume {
	pv.Spec.NodeAffinity = &corev1.VolumeNodeAffinity{Required: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
		MatchExpressions: []corev1.NodeSelectorRequirement{{Key: key, Operator: op, Values: vals}}}}}}
	return pv
}

func TestFindMatch(t *testing.T) {
	rwo, rox := corev1.ReadWriteOnce, corev1.ReadOnlyMany
	n1 := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1", Labels: map[string]string{"kubernetes.io/hostname": "n1"}}}
	released := pvOf("released", "", "1Gi", rwo)
	released.Status.Phase = corev1.VolumeReleased
	deleting := pvOf("deleting", "", "1Gi", rwo)
	deleting.DeletionTimestamp = &metav1.Time{Time: time.Now()}
	other := pvOf("other", "", "1Gi", rwo)
	other.Spec.ClaimRef = &corev1.ObjectReference{Namespace: "ns", Name: "x", UID: "u9"}
	mine := pvOf("mine", "", "10Gi", rwo)
	mine.Spec.ClaimRef = &corev1.ObjectReference{Namespace: "ns", Name: "c"}
	labelled := pvOf("labelled", "", "1Gi", rwo)
	labelled.Labels = map[string]string{"tier": "fast"}
	sel := pvcOf(ptr.To(""), "1Gi", rwo)
	sel.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"tier": "fast"}}
	tests := []struct {
		name string
		pvc  *corev1.PersistentVolumeClaim
		pvs  []*corev1.PersistentVolume
		node *corev1.Node
		want string
	}{
		{"smallest fit", pvcOf(ptr.To(""), "1Gi", rwo), []*corev1.PersistentVolume{pvOf("big", "", "5Gi", rwo), pvOf("small", "", "2Gi", rwo), pvOf("tiny", "", "500Mi", rwo)}, nil, "small"},
		{"class must match", pvcOf(ptr.To("fast"), "1Gi", rwo), []*corev1.PersistentVolume{pvOf("a", "", "5Gi", rwo), pvOf("b", "fast", "5Gi", rwo)}, nil, "b"},
		{"modes superset", pvcOf(ptr.To(""), "1Gi", rwo, rox), []*corev1.PersistentVolume{pvOf("a", "", "5Gi", rwo), pvOf("b", "", "5Gi", rox, rwo)}, nil, "b"},
		{"skip released, deleting, bound elsewhere", pvcOf(ptr.To(""), "1Gi", rwo), []*corev1.PersistentVolume{released, deleting, other}, nil, ""},
		{"pre-bound wins", pvcOf(ptr.To(""), "1Gi", rwo), []*corev1.PersistentVolume{pvOf("small", "", "1Gi", rwo), mine}, nil, "mine"},
		{"selector", sel, []*corev1.PersistentVolume{pvOf("plain", "", "1Gi", rwo), labelled}, nil, "labelled"},
		{"node affinity", pvcOf(ptr.To(""), "1Gi", rwo), []*corev1.PersistentVolume{
			affinity(pvOf("n2", "", "1Gi", rwo), "kubernetes.io/hostname", corev1.NodeSelectorOpIn, "n2"),
			affinity(pvOf("n1", "", "3Gi", rwo), "kubernetes.io/hostname", corev1.NodeSelectorOpIn, "n1")}, n1, "n1"},
		{"no node: affinity ignored", pvcOf(ptr.To(""), "1Gi", rwo), []*corev1.PersistentVolume{
			affinity(pvOf("n2", "", "1Gi", rwo), "kubernetes.io/hostname", corev1.NodeSelectorOpIn, "n2")}, nil, "n2"},
	}
	for _, tt := range tests {
		got := findMatch(tt.pvc, ClaimClass(tt.pvc, emptyClasses()), tt.pvs, tt.node)
		name := ""
		if got != nil {
			name = got.Name
		}
		if name != tt.want {
			t.Errorf("%s: got %q want %q", tt.name, name, tt.want)
		}
	}
}

func TestNodeAffinityAdmits(t *testing.T) {
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1", Labels: map[string]string{"zone": "a", "gen": "5"}}}
	tests := []struct {
		name string
		pv   *corev1.PersistentVolume
		want bool
	}{
		{"none", pvOf("p", "", "1Gi"), true},
		{"in", affinity(pvOf("p", "", "1Gi"), "zone", corev1.NodeSelectorOpIn, "a", "b"), true},
		{"not in", affinity(pvOf("p", "", "1Gi"), "zone", corev1.NodeSelectorOpNotIn, "a"), false},
		{"exists", affinity(pvOf("p", "", "1Gi"), "zone", corev1.NodeSelectorOpExists), true},
		{"does not exist", affinity(pvOf("p", "", "1Gi"), "zone", corev1.NodeSelectorOpDoesNotExist), false},
		{"gt", affinity(pvOf("p", "", "1Gi"), "gen", corev1.NodeSelectorOpGt, "4"), true},
		{"lt", affinity(pvOf("p", "", "1Gi"), "gen", corev1.NodeSelectorOpLt, "4"), false},
		{"bad gt", affinity(pvOf("p", "", "1Gi"), "gen", corev1.NodeSelectorOpGt, "x"), false},
	}
	for _, tt := range tests {
		if got := NodeAffinityAdmits(tt.pv, node); got != tt.want {
			t.Errorf("%s: got %v want %v", tt.name, got, tt.want)
		}
	}
	fields := pvOf("p", "", "1Gi")
	fields.Spec.NodeAffinity = &corev1.VolumeNodeAffinity{Required: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{
		{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "zone", Operator: corev1.NodeSelectorOpIn, Values: []string{"b"}}}},
		{MatchFields: []corev1.NodeSelectorRequirement{{Key: "metadata.name", Operator: corev1.NodeSelectorOpIn, Values: []string{"n1"}}}},
	}}}
	if !NodeAffinityAdmits(fields, node) {
		t.Error("terms are ORed; the metadata.name field term admits n1")
	}
}

func emptyClasses() storagelisters.StorageClassLister {
	return storagelisters.NewStorageClassLister(cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{}))
}

func TestClaimClass(t *testing.T) {
	idx := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	old := metav1.NewTime(time.Now().Add(-time.Hour))
	for _, sc := range []*storagev1.StorageClass{
		{ObjectMeta: metav1.ObjectMeta{Name: "old-default", CreationTimestamp: old, Annotations: map[string]string{AnnDefaultClass: "true"}}},
		{ObjectMeta: metav1.ObjectMeta{Name: "new-default", CreationTimestamp: metav1.Now(), Annotations: map[string]string{AnnDefaultClass: "true"}}},
		{ObjectMeta: metav1.ObjectMeta{Name: "not-default", CreationTimestamp: metav1.Now(), Annotations: map[string]string{AnnDefaultClass: "false"}}},
	} {
		_ = idx.Add(sc)
	}
	lister := storagelisters.NewStorageClassLister(idx)
	beta := pvcOf(ptr.To("x"), "1Gi")
	beta.Annotations = map[string]string{corev1.BetaStorageClassAnnotation: "beta"}
	for _, tt := range []struct {
		pvc  *corev1.PersistentVolumeClaim
		want string
	}{{pvcOf(nil, "1Gi"), "new-default"}, {pvcOf(ptr.To(""), "1Gi"), ""}, {pvcOf(ptr.To("x"), "1Gi"), "x"}, {beta, "beta"}} {
		if got := ClaimClass(tt.pvc, lister); got != tt.want {
			t.Errorf("ClaimClass(%v) = %q want %q", tt.pvc.Spec.StorageClassName, got, tt.want)
		}
	}
	if got := ClaimClass(pvcOf(nil, "1Gi"), emptyClasses()); got != "" {
		t.Errorf("no default class: got %q", got)
	}
}
