package scheduler

import (
	"errors"
	"fmt"
	"sort"
	"strings"
)

var (
	// ErrNodeNotFound: a node name is not in the snapshot.
	ErrNodeNotFound = errors.New("node not found in snapshot")
	// ErrUnschedulable is matched (errors.Is) by every *FitError.
	ErrUnschedulable = errors.New("pod is unschedulable")
)

// FitError says why a pod fits no node: the reasons per node name.
type FitError struct {
	Pod         string // namespace/name
	NumAllNodes int
	NodeReasons map[string][]string
	// PreFilterMsg rejected the pod on every node before filtering
	// (e.g. MsgUnboundImmediate); NodeReasons is then empty.
	PreFilterMsg string
	// PostFilterMsg is what preemption said ("preemption: ...").
	PostFilterMsg string
}

// Error returns kube-scheduler's message, e.g. "0/3 nodes are available:
// 1 Insufficient cpu, 2 node(s) didn't match Pod's node affinity/selector.".
// Like upstream, each reason is counted over nodes and the "<count>
// <reason>" strings are sorted.
func (e *FitError) Error() string {
	counts := map[string]int{}
	for _, rs := range e.NodeReasons {
		for _, r := range rs {
			counts[r]++
		}
	}
	parts := make([]string, 0, len(counts))
	for r, n := range counts {
		parts = append(parts, fmt.Sprintf("%d %s", n, r))
	}
	sort.Strings(parts)
	msg := fmt.Sprintf("0/%d nodes are available", e.NumAllNodes)
	switch {
	case e.PreFilterMsg != "":
		msg += ": " + e.PreFilterMsg + "."
	case len(parts) > 0:
		msg += ": " + strings.Join(parts, ", ") + "."
	default:
		msg += "."
	}
	if e.PostFilterMsg != "" {
		msg += " " + e.PostFilterMsg
	}
	return msg
}

// Is makes errors.Is(err, ErrUnschedulable) true for a *FitError.
func (e *FitError) Is(target error) bool { return target == ErrUnschedulable }
