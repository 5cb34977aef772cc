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

// filterNodes returns the nodes passing every filter, in snapshot order.
func filterNodes(ps *podState, nodes []*NodeInfo, workers int) []*NodeInfo {
	if workers <= 1 {
		return filterRange(ps, nodes)
	}
	parts := make([][]*NodeInfo, workers)
	chunk := (len(nodes) + workers - 1) / workers
	parallelize(len(nodes), workers, func(lo, hi int) {
		parts[lo/chunk] = filterRange(ps, nodes[lo:hi])
	})
	var out []*NodeInfo
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

func filterRange(ps *podState, nodes []*NodeInfo) []*NodeInfo {
	out := make([]*NodeInfo, 0, len(nodes))
	buf := make([]string, 0, 8)
	for _, ni := range nodes {
		if len(runFilters(ps, ni, buf)) == 0 {
			out = append(out, ni)
		}
	}
	return out
}
