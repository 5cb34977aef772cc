package garbagecollector

import (
	"slices"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

// node is what the collector knows of one object.
type node struct {
	res        schema.GroupVersionResource
	namespace  string
	name       string
	uid        types.UID
	owners     []metav1.OwnerReference
	finalizers []string
	deleting   bool // has a deletionTimestamp
}

func (n *node) has(finalizer string) bool { return slices.Contains(n.finalizers, finalizer) }

// graph is the ownership graph: objects by uid and dependents by owner uid.
// Dependents are indexed by the owner uid in their references, whether or
// not the owner is known.
type graph struct {
	mu         sync.Mutex
	nodes      map[types.UID]*node
	dependents map[types.UID]map[types.UID]bool
}

func newGraph() *graph {
	return &graph{nodes: map[types.UID]*node{}, dependents: map[types.UID]map[types.UID]bool{}}
}

// upsert stores n and returns the owner uids it no longer references.
func (g *graph) upsert(n *node) (removed []types.UID) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if old := g.nodes[n.uid]; old != nil {
		for _, o := range old.owners {
			if !slices.ContainsFunc(n.owners, func(r metav1.OwnerReference) bool { return r.UID == o.UID }) {
				removed = append(removed, o.UID)
				g.unlink(o.UID, n.uid)
			}
		}
	}
	g.nodes[n.uid] = n
	for _, o := range n.owners {
		if g.dependents[o.UID] == nil {
			g.dependents[o.UID] = map[types.UID]bool{}
		}
		g.dependents[o.UID][n.uid] = true
	}
	return removed
}

// remove forgets uid and returns what it was.
func (g *graph) remove(uid types.UID) *node {
	g.mu.Lock()
	defer g.mu.Unlock()
	n := g.nodes[uid]
	if n == nil {
		return nil
	}
	delete(g.nodes, uid)
	for _, o := range n.owners {
		g.unlink(o.UID, uid)
	}
	return n
}

func (g *graph) unlink(owner, dep types.UID) {
	if d := g.dependents[owner]; d != nil {
		delete(d, dep)
		if len(d) == 0 {
			delete(g.dependents, owner)
		}
	}
}

// get returns a copy of the node of uid.
func (g *graph) get(uid types.UID) (node, bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	n := g.nodes[uid]
	if n == nil {
		return node{}, false
	}
	return *n, true
}

// dependentsOf returns copies of the known dependents of owner.
func (g *graph) dependentsOf(owner types.UID) []node {
	g.mu.Lock()
	defer g.mu.Unlock()
	var out []node
	for uid := range g.dependents[owner] {
		if n := g.nodes[uid]; n != nil {
			out = append(out, *n)
		}
	}
	return out
}

// hasDependents tells whether some known object references uid.
func (g *graph) hasDependents(uid types.UID) bool {
	return len(g.dependentsOf(uid)) > 0
}
