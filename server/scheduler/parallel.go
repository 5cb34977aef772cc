package scheduler

import (
	"runtime"
	"sync"
)

// minNodesPerWorker keeps small snapshots on one goroutine.
const minNodesPerWorker = 256

// parallelism is how many goroutines to use for n nodes.
func (c *Config) parallelism(n int) int {
	p := c.Parallelism
	if p <= 0 {
		p = runtime.GOMAXPROCS(0)
	}
	return max(1, min(p, n/minNodesPerWorker))
}

// parallelize calls fn on contiguous chunks [lo, hi) of [0, n), one per
// worker, and waits for all of them.
func parallelize(n, workers int, fn func(lo, hi int)) {
	if workers <= 1 {
		fn(0, n)
		return
	}
	var wg sync.WaitGroup
	chunk := (n + workers - 1) / workers
	for lo := 0; lo < n; lo += chunk {
		wg.Add(1)
		go func(lo, hi int) {
			defer wg.Done()
			fn(lo, hi)
		}(lo, min(lo+chunk, n))
	}
	wg.Wait()
}

// scratch holds per-Schedule buffers, pooled: at thousands of nodes they
// are most of what a Schedule call allocates.
type scratch struct {
	feasible []*NodeInfo
	parts    [][]*NodeInfo
	total    []int64
}

var scratchPool = sync.Pool{New: func() any { return &scratch{} }}

// filterNodes returns the nodes passing every filter, in snapshot order,
// in sc's buffer.
func filterNodes(ps *podState, nodes []*NodeInfo, workers int, sc *scratch) []*NodeInfo {
	if workers <= 1 {
		sc.feasible = filterRange(ps, nodes, sc.feasible[:0])
		return sc.feasible
	}
	for len(sc.parts) < workers {
		sc.parts = append(sc.parts, nil)
	}
	chunk := (len(nodes) + workers - 1) / workers
	parallelize(len(nodes), workers, func(lo, hi int) {
		i := lo / chunk
		sc.parts[i] = filterRange(ps, nodes[lo:hi], sc.parts[i][:0])
	})
	out := sc.feasible[:0]
	for _, p := range sc.parts[:workers] {
		out = append(out, p...)
	}
	sc.feasible = out
	return out
}

func filterRange(ps *podState, nodes []*NodeInfo, out []*NodeInfo) []*NodeInfo {
	buf := make([]string, 0, 8)
	for _, ni := range nodes {
		if len(runFilters(ps, ni, buf)) == 0 {
			out = append(out, ni)
		}
	}
	return out
}
