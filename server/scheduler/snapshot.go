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
}

// Snapshot is a consistent view of nodes and the pods bound to them.
// Pods without spec.nodeName or on unknown nodes are ignored.
type Snapshot struct {
	Nodes  []*NodeInfo
	byName map[string]*NodeInfo
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
			ni.addPod(p)
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
	ni.addPod(p)
	return nil
}
