package pvbinder

import (
	"slices"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	storagelisters "k8s.io/client-go/listers/storage/v1"
)

// Annotations of the binding protocol (upstream's names).
const (
	AnnSelectedNode         = "volume.kubernetes.io/selected-node"
	AnnStorageProvisioner   = "volume.kubernetes.io/storage-provisioner"
	AnnBetaStorageProvision = "volume.beta.kubernetes.io/storage-provisioner"
	AnnBindCompleted        = "pv.kubernetes.io/bind-completed"
	AnnBoundByController    = "pv.kubernetes.io/bound-by-controller"
	AnnProvisionedBy        = "pv.kubernetes.io/provisioned-by"
	AnnDefaultClass         = "storageclass.kubernetes.io/is-default-class"
	// NoProvisioner is the provisioner of classes of static volumes only.
	NoProvisioner = "kubernetes.io/no-provisioner"
)

// ClaimClass is the StorageClass a claim asks for: the beta annotation,
// spec.storageClassName, or, when neither is set, the default class (the
// newest one annotated is-default-class=true; "" when there is none).
func ClaimClass(pvc *corev1.PersistentVolumeClaim, classes storagelisters.StorageClassLister) string {
	if c, ok := pvc.Annotations[corev1.BetaStorageClassAnnotation]; ok {
		return c
	}
	if pvc.Spec.StorageClassName != nil {
		return *pvc.Spec.StorageClassName
	}
	return DefaultClass(classes)
}

// DefaultClass is the newest class annotated as the default, or "".
func DefaultClass(classes storagelisters.StorageClassLister) string {
	all, err := classes.List(labels.Everything())
	if err != nil {
		return ""
	}
	var best *storagev1.StorageClass
	for _, sc := range all {
		if v, _ := strconv.ParseBool(sc.Annotations[AnnDefaultClass]); !v {
			continue
		}
		if best == nil || sc.CreationTimestamp.After(best.CreationTimestamp.Time) ||
			(sc.CreationTimestamp.Equal(&best.CreationTimestamp) && sc.Name < best.Name) {
			best = sc
		}
	}
	if best == nil {
		return ""
	}
	return best.Name
}

// VolumeClass is the StorageClass of a volume.
func VolumeClass(pv *corev1.PersistentVolume) string {
	if c, ok := pv.Annotations[corev1.BetaStorageClassAnnotation]; ok {
		return c
	}
	return pv.Spec.StorageClassName
}

// claimRefIs reports whether pv's claimRef names pvc (UID unset or equal).
func claimRefIs(pv *corev1.PersistentVolume, pvc *corev1.PersistentVolumeClaim) bool {
	r := pv.Spec.ClaimRef
	return r != nil && r.Namespace == pvc.Namespace && r.Name == pvc.Name && (r.UID == "" || r.UID == pvc.UID)
}

// satisfies reports whether pv can serve pvc of class (ignoring claimRef).
func satisfies(pv *corev1.PersistentVolume, pvc *corev1.PersistentVolumeClaim, class string) bool {
	if pv.DeletionTimestamp != nil || VolumeClass(pv) != class || volumeMode(pv.Spec.VolumeMode) != volumeMode(pvc.Spec.VolumeMode) {
		return false
	}
	for _, m := range pvc.Spec.AccessModes {
		if !slices.Contains(pv.Spec.AccessModes, m) {
			return false
		}
	}
	want := pvc.Spec.Resources.Requests[corev1.ResourceStorage]
	have := pv.Spec.Capacity[corev1.ResourceStorage]
	if have.Cmp(want) < 0 {
		return false
	}
	if pvc.Spec.Selector != nil {
		sel, err := metav1.LabelSelectorAsSelector(pvc.Spec.Selector)
		if err != nil || !sel.Matches(labels.Set(pv.Labels)) {
			return false
		}
	}
	return true
}

func volumeMode(m *corev1.PersistentVolumeMode) corev1.PersistentVolumeMode {
	if m == nil {
		return corev1.PersistentVolumeFilesystem
	}
	return *m
}

// findMatch picks the volume for unbound pvc: one pre-bound to it first
// (provisioned for it, or named by the user), else the smallest Available
// one that satisfies it and whose required node affinity admits node (nil:
// no node constraint).
func findMatch(pvc *corev1.PersistentVolumeClaim, class string, pvs []*corev1.PersistentVolume, node *corev1.Node) *corev1.PersistentVolume {
	var best *corev1.PersistentVolume
	for _, pv := range pvs {
		prebound := claimRefIs(pv, pvc)
		if (pv.Spec.ClaimRef != nil && !prebound) || !satisfies(pv, pvc, class) {
			continue
		}
		if prebound {
			return pv // provisioned for it or pre-bound by the user
		}
		if pv.Status.Phase == corev1.VolumeReleased || pv.Status.Phase == corev1.VolumeFailed {
			continue
		}
		if node != nil && !NodeAffinityAdmits(pv, node) {
			continue
		}
		if best == nil || capacityLess(pv, best) {
			best = pv
		}
	}
	return best
}

func capacityLess(a, b *corev1.PersistentVolume) bool {
	qa, qb := a.Spec.Capacity[corev1.ResourceStorage], b.Spec.Capacity[corev1.ResourceStorage]
	if c := qa.Cmp(qb); c != 0 {
		return c < 0
	}
	return a.Name < b.Name
}
