package schedloop

import (
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/tools/cache"

	"github.com/orch/orch/server/scheduler"
)

// podsByNode indexes the pod cache by spec.nodeName.
const podsByNode = "schedloop.nodeName"

func podNodeIndex(obj any) ([]string, error) {
	if p, ok := obj.(*corev1.Pod); ok && p.Spec.NodeName != "" {
		return []string{p.Spec.NodeName}, nil
	}
	return nil, nil
}

// nodeCache keeps a scheduler.NodeInfo per node between snapshots (the
// scheduler cache): informer handlers mark nodes dirty, the worker
// rebuilds only those. Only the worker touches infos and order.
type nodeCache struct {
	infos map[string]*scheduler.NodeInfo
	order []*scheduler.NodeInfo // by node name
}

// markNode records that node's NodeInfo must be rebuilt; nodesChanged
// when the set of nodes may have changed.
func (r *run) markNode(name string, nodesChanged bool) {
	if name == "" {
		return
	}
	r.mu.Lock()
	r.dirty[name] = true
	r.nodesChanged = r.nodesChanged || nodesChanged
	r.mu.Unlock()
}

// markPod marks the nodes of both versions of a pod.
func (r *run) markPod(old, cur *corev1.Pod) {
	if old != nil {
		r.markNode(old.Spec.NodeName, false)
	}
	if cur != nil && (old == nil || cur.Spec.NodeName != old.Spec.NodeName || cur.ResourceVersion != old.ResourceVersion) {
		r.markNode(cur.Spec.NodeName, false)
	}
}

// refresh rebuilds the dirty NodeInfos and returns the nodes in order.
func (r *run) refresh(inf cache.Indexer) ([]*scheduler.NodeInfo, error) {
	r.mu.Lock()
	dirty, changed := r.dirty, r.nodesChanged
	r.dirty, r.nodesChanged = map[string]bool{}, false
	r.mu.Unlock()
	c := &r.cache
	for name := range dirty {
		node, err := r.l.nodes.Get(name)
		if apierrors.IsNotFound(err) {
			if _, ok := c.infos[name]; ok {
				delete(c.infos, name)
				changed = true
			}
			continue
		}
		if err != nil {
			return nil, err
		}
		objs, err := inf.ByIndex(podsByNode, name)
		if err != nil {
			return nil, err
		}
		pods := make([]*corev1.Pod, 0, len(objs))
		for _, o := range objs {
			pods = append(pods, o.(*corev1.Pod))
		}
		if _, ok := c.infos[name]; !ok {
			changed = true
		}
		c.infos[name] = scheduler.NewNodeInfo(node, pods)
	}
	if changed {
		c.order = c.order[:0]
		for _, ni := range c.infos {
			c.order = append(c.order, ni)
		}
		slices.SortFunc(c.order, func(a, b *scheduler.NodeInfo) int { return strings.Compare(a.Node.Name, b.Node.Name) })
	} else {
		for i, ni := range c.order {
			c.order[i] = c.infos[ni.Node.Name]
		}
	}
	return c.order, nil
}
