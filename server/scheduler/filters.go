package scheduler

import (
	"slices"

	corev1 "k8s.io/api/core/v1"
)

// Reasons, worded as kube-scheduler's plugins word them.
const (
	ReasonUnschedulable = "node(s) were unschedulable"
	ReasonNodeName      = "node(s) didn't match the requested node name"
	ReasonNodeAffinity  = "node(s) didn't match Pod's node affinity/selector"
	ReasonNodePorts     = "node(s) didn't have free ports for the requested pod ports"
	// ReasonUntoleratedTaint is v1.37's wording; older releases named the
	// taint ("{key: value}"), which upstream dropped.
	ReasonUntoleratedTaint  = "node(s) had untolerated taint(s)"
	ReasonInsufficientCPU   = "Insufficient cpu"
	ReasonInsufficientMem   = "Insufficient memory"
	ReasonInsufficientEphem = "Insufficient ephemeral-storage"
	ReasonTooManyPods       = "Too many pods"
)

// TaintNodeUnschedulable is the taint a cordoned node implies.
const TaintNodeUnschedulable = "node.kubernetes.io/unschedulable"

// podState is what the filters and scores need about the pod, computed
// once per Schedule call.
type podState struct {
	pod        *corev1.Pod
	req        Resource
	nonZeroReq Resource
	ports      []corev1.ContainerPort
	// Cluster-wide PreFilter state, nil when the plugin has nothing to do.
	nsLabels map[string]string
	spread   *spreadState
	affinity *affinityState
	volumes  *volumeState
	parsed   *podTerms
}

func newPodState(pod *corev1.Pod) *podState {
	return &podState{pod: pod, req: PodRequests(pod, false), nonZeroReq: PodRequests(pod, true), ports: podHostPorts(pod)}
}

// prepare runs the PreFilter plugins over snap: VolumeBinding (whose
// message, if any, rejects the pod on every node), PodTopologySpread and
// InterPodAffinity.
func (ps *podState) prepare(snap *Snapshot) string {
	ps.nsLabels = snap.NamespaceLabels[ps.pod.Namespace]
	vs, msg := newVolumeState(ps.pod, snap.Storage)
	if msg != "" {
		return msg
	}
	ps.volumes = vs
	ps.refresh(snap)
	return ""
}

// refresh recomputes the cluster-wide filter state over snap.
func (ps *podState) refresh(snap *Snapshot) {
	ps.spread = newSpreadState(ps.pod, snap)
	ps.affinity = newAffinityState(ps.pod, ps.terms(), snap)
}

// terms returns the pod's parsed affinity terms (computed once).
func (ps *podState) terms() *podTerms {
	if ps.parsed == nil {
		t := parsePodTerms(ps.pod)
		ps.parsed = &t
	}
	return ps.parsed
}

// filterFunc appends to out the reasons the node does not fit; appending
// nothing means it fits. Appending to a caller's buffer keeps the hot
// path free of allocations.
type filterFunc func(ps *podState, ni *NodeInfo, out []string) []string

func filterNodeUnschedulable(ps *podState, ni *NodeInfo, out []string) []string {
	if !ni.Node.Spec.Unschedulable {
		return out
	}
	taint := corev1.Taint{Key: TaintNodeUnschedulable, Effect: corev1.TaintEffectNoSchedule}
	if tolerated(ps.pod.Spec.Tolerations, &taint) {
		return out
	}
	return append(out, ReasonUnschedulable)
}

func filterNodeName(ps *podState, ni *NodeInfo, out []string) []string {
	if ps.pod.Spec.NodeName == "" || ps.pod.Spec.NodeName == ni.Node.Name {
		return out
	}
	return append(out, ReasonNodeName)
}

func filterTaintToleration(ps *podState, ni *NodeInfo, out []string) []string {
	t := firstUntoleratedTaint(ni.Node.Spec.Taints, ps.pod.Spec.Tolerations,
		corev1.TaintEffectNoSchedule, corev1.TaintEffectNoExecute)
	if t == nil {
		return out
	}
	return append(out, ReasonUntoleratedTaint)
}

func filterNodeAffinity(ps *podState, ni *NodeInfo, out []string) []string {
	if podMatchesNodeSelectorAndAffinity(ps.pod, ni.Node) {
		return out
	}
	return append(out, ReasonNodeAffinity)
}

func filterNodePorts(ps *podState, ni *NodeInfo, out []string) []string {
	for _, p := range ps.ports {
		if ni.UsedPorts.conflicts(p) {
			return append(out, ReasonNodePorts)
		}
	}
	return out
}

// filterNodeResourcesFit is upstream's fitsRequest for cpu, memory,
// ephemeral-storage, scalar resources and the pod count.
func filterNodeResourcesFit(ps *podState, ni *NodeInfo, out []string) []string {
	reasons := out
	if int64(len(ni.Pods))+1 > ni.AllowedPods {
		reasons = append(reasons, ReasonTooManyPods)
	}
	r, a, u := ps.req, ni.Allocatable, ni.Requested
	if r.MilliCPU > 0 && r.MilliCPU > a.MilliCPU-u.MilliCPU {
		reasons = append(reasons, ReasonInsufficientCPU)
	}
	if r.Memory > 0 && r.Memory > a.Memory-u.Memory {
		reasons = append(reasons, ReasonInsufficientMem)
	}
	if r.EphemeralStorage > 0 && r.EphemeralStorage > a.EphemeralStorage-u.EphemeralStorage {
		reasons = append(reasons, ReasonInsufficientEphem)
	}
	return appendInsufficientScalars(reasons, r, a, u)
}

// appendInsufficientScalars adds "Insufficient <name>" for every scalar
// resource the pod asks for beyond what the node has left, in name order.
func appendInsufficientScalars(reasons []string, r, a, u Resource) []string {
	var short []string
	for n, v := range r.Scalar {
		if v > 0 && v > a.Scalar[n]-u.Scalar[n] {
			short = append(short, "Insufficient "+string(n))
		}
	}
	slices.Sort(short)
	return append(reasons, short...)
}

// runFilters returns out with the node's reasons appended; none if the
// node passes every filter. Filters run in the default profile's order;
// the first failing one decides the node's reasons, as upstream's framework.
func runFilters(ps *podState, ni *NodeInfo, out []string) []string {
	filters := [...]filterFunc{
		filterNodeName,
		filterNodeUnschedulable,
		filterTaintToleration,
		filterNodeAffinity,
		filterNodePorts,
		filterNodeResourcesFit,
		filterVolumeBinding,
		filterPodTopologySpread,
		filterInterPodAffinity,
	}
	for _, f := range filters {
		if r := f(ps, ni, out); len(r) > len(out) {
			return r
		}
	}
	return out
}
