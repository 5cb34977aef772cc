package nodelifecycle

import (
	"sync"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Condition texts of an unreachable node, as upstream writes them.
const (
	reasonUnknown  = "NodeStatusUnknown"
	messageUnknown = "Kubelet stopped posting node status."
)

// observation is what this server last saw of a node's heartbeat and when
// (by its own clock).
type observation struct {
	renew    time.Time // lease spec.renewTime as last seen
	ready    time.Time // Ready condition lastHeartbeatTime as last seen
	probedAt time.Time // local time when either last changed
}

// observer tracks heartbeats per node.
type observer struct {
	mu   sync.Mutex
	seen map[string]observation
}

func newObserver() *observer { return &observer{seen: map[string]observation{}} }

// observe records the node's current heartbeat and returns the local time
// it last changed. A node seen for the first time counts as fresh.
func (o *observer) observe(node *corev1.Node, lease *coordinationv1.Lease, now time.Time) time.Time {
	cur := observation{}
	if lease != nil && lease.Spec.RenewTime != nil {
		cur.renew = lease.Spec.RenewTime.Time
	}
	if c := condition(node, corev1.NodeReady); c != nil {
		cur.ready = c.LastHeartbeatTime.Time
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	prev, ok := o.seen[node.Name]
	if !ok || !prev.renew.Equal(cur.renew) || !prev.ready.Equal(cur.ready) {
		cur.probedAt = now
		o.seen[node.Name] = cur
		return now
	}
	return prev.probedAt
}

func (o *observer) forget(name string) {
	o.mu.Lock()
	delete(o.seen, name)
	o.mu.Unlock()
}

// markUnknown sets every kubelet-owned condition of node to Unknown and
// reports whether anything changed. Missing Ready is added.
func markUnknown(node *corev1.Node, now time.Time) bool {
	changed := false
	t := metav1.NewTime(now)
	types := []corev1.NodeConditionType{corev1.NodeReady, corev1.NodeMemoryPressure, corev1.NodeDiskPressure, corev1.NodePIDPressure}
	for _, typ := range types {
		c := condition(node, typ)
		if c == nil {
			if typ != corev1.NodeReady {
				continue
			}
			node.Status.Conditions = append(node.Status.Conditions, corev1.NodeCondition{Type: typ})
			c = &node.Status.Conditions[len(node.Status.Conditions)-1]
		}
		if c.Status == corev1.ConditionUnknown {
			continue
		}
		c.Status, c.Reason, c.Message, c.LastTransitionTime = corev1.ConditionUnknown, reasonUnknown, messageUnknown, t
		changed = true
	}
	return changed
}
