package scheduler

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
)

// NodeInfo is a node with the aggregate of the pods assigned to it.
type NodeInfo struct {
	Node *corev1.Node
	Pods []*corev1.Pod
	// Requested is the sum of the pods' effective requests (filters).
	Requested Resource
	// NonZeroRequested is the same with scoring defaults (scores).
	NonZeroRequested Resource
	Allocatable      Resource
	AllowedPods      int64
	UsedPorts        HostPorts
	// withAffinity are the pods here with any pod (anti-)affinity.
	withAffinity []*placedPod
}

func newNodeInfo(node *corev1.Node) *NodeInfo {
	alloc, pods := allocatable(node)
	return &NodeInfo{Node: node, Allocatable: alloc, AllowedPods: pods, UsedPorts: HostPorts{}}
}

func (ni *NodeInfo) addPod(pod *corev1.Pod) {
	ni.Pods = append(ni.Pods, pod)
	ni.Requested.add(PodRequests(pod, false))
	ni.NonZeroRequested.add(PodRequests(pod, true))
	ni.UsedPorts.addPod(pod)
	if hasPodAffinity(pod) {
		ni.withAffinity = append(ni.withAffinity, newPlacedPod(pod, ni))
	}
}

// Snapshot is a consistent view of nodes and the pods bound to them.
// Pods without spec.nodeName or on unknown nodes are ignored.
type Snapshot struct {
	Nodes []*NodeInfo
	// NamespaceLabels are the labels of each namespace (pod affinity
	// namespaceSelector); nil means no namespace has labels.
	NamespaceLabels map[string]map[string]string
	// Storage holds the PVCs, PVs and StorageClasses VolumeBinding reads;
	// nil means none exist.
	Storage *Storage

	byName map[string]*NodeInfo
	// shared: the NodeInfos may be shared with other snapshots, so
	// changing one copies it first (see NewSnapshotFromInfos).
	shared bool
	owned  map[*NodeInfo]bool
	// affinityPods counts pods with pod (anti-)affinity, for the fast path.
	affinityPods int
	images       map[string]imageState // lazily, for ImageLocality
}

// NewSnapshot builds a Snapshot, precomputing a NodeInfo per node.
// Terminated pods (Succeeded/Failed) do not hold resources.
func NewSnapshot(nodes []*corev1.Node, pods []*corev1.Pod) *Snapshot {
	s := &Snapshot{Nodes: make([]*NodeInfo, 0, len(nodes)), byName: make(map[string]*NodeInfo, len(nodes))}
	for _, n := range nodes {
		ni := newNodeInfo(n)
		s.Nodes = append(s.Nodes, ni)
		s.byName[n.Name] = ni
	}
	for _, p := range pods {
		if p.Spec.NodeName == "" || p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
			continue
		}
		if ni, ok := s.byName[p.Spec.NodeName]; ok {
			s.add(ni, p)
		}
	}
	return s
}

// NodeInfo returns the named node's info, or nil.
func (s *Snapshot) NodeInfo(name string) *NodeInfo { return s.byName[name] }

// AssumePod records pod as running on nodeName, as the scheduler cache
// does after a bind. The pod is copied with spec.nodeName set.
func (s *Snapshot) AssumePod(pod *corev1.Pod, nodeName string) error {
	ni, ok := s.byName[nodeName]
	if !ok {
		return fmt.Errorf("assume pod %s/%s on node %q: %w", pod.Namespace, pod.Name, nodeName, ErrNodeNotFound)
	}
	p := pod.DeepCopy()
	p.Spec.NodeName = nodeName
	s.add(ni, p)
	return nil
}

func (s *Snapshot) add(ni *NodeInfo, p *corev1.Pod) {
	ni = s.mutable(ni)
	ni.addPod(p)
	if hasPodAffinity(p) {
		s.affinityPods++
	}
}

// RemovePod drops the pod (by namespace/name) from its node, as the
// scheduler cache does when a pod is deleted (or preempted).
func (s *Snapshot) RemovePod(pod *corev1.Pod) {
	ni := s.byName[pod.Spec.NodeName]
	if ni == nil {
		return
	}
	ni = s.mutable(ni)
	fresh := newNodeInfo(ni.Node)
	for _, p := range ni.Pods {
		if p.Namespace == pod.Namespace && p.Name == pod.Name {
			if hasPodAffinity(p) {
				s.affinityPods--
			}
			continue
		}
		fresh.addPod(p)
	}
	*ni = *fresh
}

// NewNodeInfo builds the NodeInfo of node with the pods bound to it
// (terminated pods do not hold resources), for callers that keep
// NodeInfos between snapshots (NewSnapshotFromInfos).
func NewNodeInfo(node *corev1.Node, pods []*corev1.Pod) *NodeInfo {
	ni := newNodeInfo(node)
	for _, p := range pods {
		if p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed {
			ni.addPod(p)
		}
	}
	return ni
}

// NewSnapshotFromInfos builds a Snapshot over NodeInfos kept by the
// caller (an incremental cache). They are never changed through the
// Snapshot: AssumePod and RemovePod work on copies.
func NewSnapshotFromInfos(infos []*NodeInfo) *Snapshot {
	s := &Snapshot{Nodes: append([]*NodeInfo(nil), infos...), byName: make(map[string]*NodeInfo, len(infos)),
		shared: true, owned: map[*NodeInfo]bool{}}
	for _, ni := range infos {
		s.byName[ni.Node.Name] = ni
		s.affinityPods += len(ni.withAffinity)
	}
	return s
}

// mutable returns ni, or for a shared snapshot a copy of it that replaces
// it in this snapshot (once).
func (s *Snapshot) mutable(ni *NodeInfo) *NodeInfo {
	if !s.shared || s.owned[ni] {
		return ni
	}
	c := NewNodeInfo(ni.Node, ni.Pods)
	for i, x := range s.Nodes {
		if x == ni {
			s.Nodes[i] = c
			break
		}
	}
	s.byName[ni.Node.Name] = c
	s.owned[c] = true
	return c
}
