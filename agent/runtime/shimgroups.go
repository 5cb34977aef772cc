package runtime

import (
	"maps"
	"slices"
	"strconv"
	"sync"
)

// DefaultPodsPerShim is how many pods share a containerd-shim-runc-v2 by
// default. Each shim costs about 3 MiB of memory of its own on top of its
// shared text; more pods per shim cost less, but a shim that dies takes
// every container it runs with it (containerd kills the tasks of a dead
// shim), so the group stays small.
const DefaultPodsPerShim = 4

// shimGroups assigns pods to shim groups (the ShimGroupAnnotation of their
// containers): every container of a pod goes to its pod's group, and a pod
// joins the fullest group with fewer than size pods, or starts a group
// named after its UID. A pod leaves its group when its last container is
// removed. size <= 1 is one shim per pod.
type shimGroups struct {
	size int

	mu      sync.Mutex
	pods    map[string]*shimPod // pod UID → its group and containers
	ctrs    map[string]string   // container ID → pod UID
	members map[string]int      // group → pods in it
}

type shimPod struct {
	group string
	ctrs  map[string]bool
}

func newShimGroups(size int) *shimGroups {
	return &shimGroups{size: size, pods: map[string]*shimPod{}, ctrs: map[string]string{}, members: map[string]int{}}
}

// assign returns the group container ctr of pod goes to, recording it.
func (g *shimGroups) assign(pod, ctr string) string {
	g.mu.Lock()
	defer g.mu.Unlock()
	p := g.pods[pod]
	if p == nil {
		p = g.join(pod, g.pick(pod))
	}
	p.ctrs[ctr] = true
	g.ctrs[ctr] = pod
	return p.group
}

// restore records a container that already exists in group (from its
// label, when the runtime starts).
func (g *shimGroups) restore(pod, ctr, group string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	p := g.pods[pod]
	if p == nil {
		p = g.join(pod, group)
	}
	p.ctrs[ctr] = true
	g.ctrs[ctr] = pod
}

// release forgets a removed container; its pod leaves the group with its
// last container.
func (g *shimGroups) release(ctr string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	pod, ok := g.ctrs[ctr]
	if !ok {
		return
	}
	delete(g.ctrs, ctr)
	p := g.pods[pod]
	delete(p.ctrs, ctr)
	if len(p.ctrs) > 0 {
		return
	}
	delete(g.pods, pod)
	if g.members[p.group]--; g.members[p.group] <= 0 {
		delete(g.members, p.group)
	}
}

func (g *shimGroups) join(pod, group string) *shimPod {
	p := &shimPod{group: group, ctrs: map[string]bool{}}
	g.pods[pod] = p
	g.members[group]++
	return p
}

// pick is the fullest group with room (ties: the first name), else a new
// group named after pod (suffixed if a group of that name lives on after
// the pod left it: static pods come back with the same UID).
func (g *shimGroups) pick(pod string) string {
	best, most := "", 0
	if g.size > 1 {
		for _, name := range slices.Sorted(maps.Keys(g.members)) {
			if n := g.members[name]; n < g.size && n > most {
				best, most = name, n
			}
		}
	}
	if best != "" {
		return best
	}
	name := pod
	for i := 1; g.members[name] > 0; i++ {
		name = pod + "-" + strconv.Itoa(i)
	}
	return name
}
