package datastore_test

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/orch/orch/datastore"
	"go.uber.org/zap"
)

// BenchmarkCreateParallel measures creates through a real single-node
// RaftStore (raft log fsync + state fsync per batch) at several concurrency
// levels; it reports creates/s and the p99 latency of one create.
// BENCH_WRITERS (comma separated, default 1,16,64) and BENCH_VALUE_BYTES
// (default 512) let `make bench` run it at its own levels and object size.
func BenchmarkCreateParallel(b *testing.B) {
	levels, size := benchLevels(b)
	for _, writers := range levels {
		b.Run(fmt.Sprintf("writers=%d", writers), func(b *testing.B) {
			cfg := datastore.NewTestConfig(b, b.TempDir())
			cfg.Logger = zap.NewNop()
			if os.Getenv("BENCH_NO_SNAPSHOT") != "" {
				cfg.SnapshotThreshold = 1 << 30
			}
			s := datastore.OpenTest(b, cfg)
			value := make([]byte, size)
			var next atomic.Int64
			lat := make([][]time.Duration, writers)
			ctx := context.Background()
			b.ResetTimer()
			start := time.Now()
			var wg sync.WaitGroup
			for w := 0; w < writers; w++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := next.Add(1); i <= int64(b.N); i = next.Add(1) {
						t0 := time.Now()
						if _, err := s.Create(ctx, fmt.Sprintf("/registry/pods/default/p-%09d", i), value); err != nil {
							b.Error(err)
							return
						}
						lat[w] = append(lat[w], time.Since(t0))
					}
				}()
			}
			wg.Wait()
			elapsed := time.Since(start)
			b.StopTimer()
			all := slices.Concat(lat...)
			slices.Sort(all)
			if len(all) > 0 {
				b.ReportMetric(float64(len(all))/elapsed.Seconds(), "creates/s")
				b.ReportMetric(float64(all[len(all)/2].Microseconds())/1000, "p50-ms")
				b.ReportMetric(float64(all[len(all)*99/100].Microseconds())/1000, "p99-ms")
			}
		})
	}
}

// benchLevels reads BENCH_WRITERS and BENCH_VALUE_BYTES.
func benchLevels(b *testing.B) ([]int, int) {
	levels, size := []int{1, 16, 64}, 512
	if v := os.Getenv("BENCH_WRITERS"); v != "" {
		levels = nil
		for _, f := range strings.Split(v, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil || n < 1 {
				b.Fatalf("BENCH_WRITERS: %q is not a positive integer", f)
			}
			levels = append(levels, n)
		}
	}
	if v := os.Getenv("BENCH_VALUE_BYTES"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			b.Fatalf("BENCH_VALUE_BYTES: %q is not a positive integer", v)
		}
		size = n
	}
	return levels, size
}
