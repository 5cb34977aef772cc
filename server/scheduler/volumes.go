package scheduler

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
)

// VolumeBinding reasons and messages, as upstream's volumebinding plugin.
const (
	ReasonVolumeNodeConflict = "node(s) didn't match PersistentVolume's node affinity"
	ReasonVolumeBindConflict = "node(s) didn't find available persistent volumes to bind"
	ReasonPVNotExist         = "node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)"
	MsgUnboundImmediate      = "pod has unbound immediate PersistentVolumeClaims"
)

// NoProvisioner is the provisioner of classes with static PVs only.
const NoProvisioner = "kubernetes.io/no-provisioner"

// AnnSelectedNode is set on a WaitForFirstConsumer claim once the
// scheduler has picked the consumer's node; the provisioner acts on it.
const AnnSelectedNode = "volume.kubernetes.io/selected-node"

// Storage is what VolumeBinding reads: claims by "namespace/name",
// volumes and classes by name.
type Storage struct {
	PVCs    map[string]*corev1.PersistentVolumeClaim
	PVs     map[string]*corev1.PersistentVolume
	Classes map[string]*storagev1.StorageClass
}

// volumeState is VolumeBinding's PreFilter state for one pod.
type volumeState struct {
	bound   []*corev1.PersistentVolume // nil entry: the PV does not exist
	delayed []*corev1.PersistentVolumeClaim
	classes []*storagev1.StorageClass // of delayed, same index
	pvs     map[string]*corev1.PersistentVolume
}

// newVolumeState is upstream's PreFilter: a message rejects the pod on
// every node (missing, lost or deleting claims, unbound Immediate claims).
func newVolumeState(pod *corev1.Pod, st *Storage) (*volumeState, string) {
	var s *volumeState
	immediate := false
	for _, v := range pod.Spec.Volumes {
		if v.PersistentVolumeClaim == nil {
			continue
		}
		name := v.PersistentVolumeClaim.ClaimName
		var pvc *corev1.PersistentVolumeClaim
		if st != nil {
			pvc = st.PVCs[pod.Namespace+"/"+name]
		}
		if msg := claimProblem(name, pvc); msg != "" {
			return nil, msg
		}
		if s == nil {
			s = &volumeState{pvs: st.PVs}
		}
		if pvc.Spec.VolumeName != "" {
			s.bound = append(s.bound, st.PVs[pvc.Spec.VolumeName])
			continue
		}
		class := st.Classes[storageClassName(pvc)]
		if class == nil || class.VolumeBindingMode == nil || *class.VolumeBindingMode != storagev1.VolumeBindingWaitForFirstConsumer {
			immediate = true
			continue
		}
		s.delayed, s.classes = append(s.delayed, pvc), append(s.classes, class)
	}
	if immediate {
		return nil, MsgUnboundImmediate
	}
	return s, ""
}

func claimProblem(name string, pvc *corev1.PersistentVolumeClaim) string {
	switch {
	case pvc == nil:
		return fmt.Sprintf("persistentvolumeclaim %q not found", name)
	case pvc.Status.Phase == corev1.ClaimLost:
		return fmt.Sprintf("persistentvolumeclaim %q bound to non-existent persistentvolume %q", name, pvc.Spec.VolumeName)
	case pvc.DeletionTimestamp != nil:
		return fmt.Sprintf("persistentvolumeclaim %q is being deleted", name)
	}
	return ""
}

func storageClassName(pvc *corev1.PersistentVolumeClaim) string {
	if pvc.Spec.StorageClassName != nil {
		return *pvc.Spec.StorageClassName
	}
	return pvc.Annotations[corev1.BetaStorageClassAnnotation]
}

func filterVolumeBinding(ps *podState, ni *NodeInfo, out []string) []string {
	s := ps.volumes
	if s == nil {
		return out
	}
	for _, pv := range s.bound {
		if pv == nil {
			return append(out, ReasonPVNotExist)
		}
	}
	reasons := out
	for _, pv := range s.bound {
		if !pvMatchesNode(pv, ni.Node) {
			reasons = append(reasons, ReasonVolumeNodeConflict)
			break
		}
	}
	for i, pvc := range s.delayed {
		if !s.canBind(pvc, s.classes[i], ni.Node) {
			reasons = append(reasons, ReasonVolumeBindConflict)
			break
		}
	}
	return reasons
}

// pvMatchesNode checks the PV's required node affinity.
func pvMatchesNode(pv *corev1.PersistentVolume, node *corev1.Node) bool {
	na := pv.Spec.NodeAffinity
	if na == nil || na.Required == nil {
		return true
	}
	return matchNodeSelectorTerms(node, na.Required.NodeSelectorTerms)
}

// canBind: an available static PV fits on node, or the class provisions
// dynamically onto a node its allowedTopologies admit.
func (s *volumeState) canBind(pvc *corev1.PersistentVolumeClaim, class *storagev1.StorageClass, node *corev1.Node) bool {
	for _, pv := range s.pvs {
		if staticPVFits(pv, pvc, class.Name) && pvMatchesNode(pv, node) {
			return true
		}
	}
	if class.Provisioner == NoProvisioner {
		return false
	}
	if len(class.AllowedTopologies) == 0 {
		return true
	}
	for _, term := range class.AllowedTopologies {
		if topologyTermMatches(term, node.Labels) {
			return true
		}
	}
	return false
}

func topologyTermMatches(term corev1.TopologySelectorTerm, nodeLabels map[string]string) bool {
	for _, e := range term.MatchLabelExpressions {
		if v, ok := nodeLabels[e.Key]; !ok || !contains(e.Values, v) {
			return false
		}
	}
	return true
}

// staticPVFits: an available (or pre-bound to this claim) PV of the class
// with enough capacity, the access modes and the volume mode asked for.
func staticPVFits(pv *corev1.PersistentVolume, pvc *corev1.PersistentVolumeClaim, class string) bool {
	if pv.Spec.StorageClassName != class || pv.DeletionTimestamp != nil {
		return false
	}
	if ref := pv.Spec.ClaimRef; ref != nil && (ref.Namespace != pvc.Namespace || ref.Name != pvc.Name) {
		return false
	}
	if pv.Spec.ClaimRef == nil && pv.Status.Phase != corev1.VolumeAvailable && pv.Status.Phase != "" {
		return false
	}
	want, have := pvc.Spec.Resources.Requests[corev1.ResourceStorage], pv.Spec.Capacity[corev1.ResourceStorage]
	if have.Cmp(want) < 0 {
		return false
	}
	for _, m := range pvc.Spec.AccessModes {
		if !containsMode(pv.Spec.AccessModes, m) {
			return false
		}
	}
	return volumeMode(pv.Spec.VolumeMode) == volumeMode(pvc.Spec.VolumeMode)
}

func containsMode(ms []corev1.PersistentVolumeAccessMode, m corev1.PersistentVolumeAccessMode) bool {
	for _, x := range ms {
		if x == m {
			return true
		}
	}
	return false
}

func volumeMode(m *corev1.PersistentVolumeMode) corev1.PersistentVolumeMode {
	if m == nil {
		return corev1.PersistentVolumeFilesystem
	}
	return *m
}

// claimsToSelect names ("namespace/name") the WaitForFirstConsumer claims
// that need AnnSelectedNode before the pod is bound.
func (s *volumeState) claimsToSelect() []string {
	if s == nil || len(s.delayed) == 0 {
		return nil
	}
	out := make([]string, 0, len(s.delayed))
	for _, pvc := range s.delayed {
		out = append(out, pvc.Namespace+"/"+pvc.Name)
	}
	return out
}
