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

	mu   sync.Mutex
	pods map[string]*shimPod // pod UID → its group and containers
	ctrs map[string]string   // container ID → pod UID
}

type shimPod struct {
	group string
	ctrs  map[string]bool
}

func newShimGroups(size int) *shimGroups {
	return &shimGroups{size: size, pods: map[string]*shimPod{}, ctrs: map[string]string{}}
}

// assign returns the group container ctr of pod goes to, recording it.
func (g *shimGroups) assign(pod, ctr string) string { return g.add(pod, ctr, "") }

// restore records a container that already exists in group (from its
// label, when the runtime starts).
func (g *shimGroups) restore(pod, ctr, group string) { g.add(pod, ctr, group) }

// add records ctr as a container of pod and returns pod's group; a pod new
// to g joins group, or the one pick chooses when group is "".
func (g *shimGroups) add(pod, ctr, group string) string {
	g.mu.Lock()
	defer g.mu.Unlock()
	p := g.pods[pod]
	if p == nil {
		if group == "" {
			group = g.pick(pod)
		}
		p = &shimPod{group: group, ctrs: map[string]bool{}}
		g.pods[pod] = p
	}
	p.ctrs[ctr] = true
	g.ctrs[ctr] = pod
	return p.group
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
	if len(p.ctrs) == 0 {
		delete(g.pods, pod)
	}
}

// members counts the pods of each group.
func (g *shimGroups) members() map[string]int {
	n := map[string]int{}
	for _, p := range g.pods {
		n[p.group]++
	}
	return n
}

// pick is the fullest group with room (ties: the first name), else a new
// group named after pod (suffixed if a group of that name lives on after
// the pod left it: static pods come back with the same UID).
func (g *shimGroups) pick(pod string) string {
	members := g.members()
	best, most := "", 0
	if g.size > 1 {
		for _, name := range slices.Sorted(maps.Keys(members)) {
			if n := members[name]; n < g.size && n > most {
				best, most = name, n
			}
		}
	}
	if best != "" {
		return best
	}
	name := pod
	for i := 1; members[name] > 0; i++ {
		name = pod + "-" + strconv.Itoa(i)
	}
	return name
}
