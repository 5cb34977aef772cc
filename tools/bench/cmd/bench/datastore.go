package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/orch/orch/tools/bench/internal/load"
	"github.com/orch/orch/tools/bench/internal/report"
)

// datastoreTarget names the datastore-alone column of the report.
const datastoreTarget = "datastore"

// storedOverhead approximates what a stored ConfigMap adds to its payload
// (metadata, managedFields, encoding), so the datastore alone writes
// values about the size of the API's.
const storedOverhead = 256

// measureDatastore runs orch's datastore benchmark (BenchmarkCreateParallel
// of the datastore package's test binary) at the run's levels: the Raft +
// bbolt store alone, in one process, without the API server in front. Each
// level runs max(3000, 500 x writers) creates on a fresh store.
func measureDatastore(ctx context.Context, log *zap.Logger, f *runFlags) *report.Target {
	t := &report.Target{Name: datastoreTarget, Version: "orch's Raft + bbolt store alone, in process"}
	dir := filepath.Join(f.workDir, datastoreTarget)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Errors = append(t.Errors, err.Error())
		return t
	}
	for _, writers := range f.levels {
		log.Info("datastore alone", zap.Int("writers", writers))
		res, err := runDatastoreLevel(ctx, f.datastoreTest, dir, writers, f.payload+storedOverhead)
		if err != nil {
			t.Errors = append(t.Errors, fmt.Sprintf("%d writers: %v", writers, err))
			continue
		}
		t.Creates = append(t.Creates, res)
	}
	return t
}

func runDatastoreLevel(ctx context.Context, bin, dir string, writers, size int) (load.CreateResult, error) {
	n := max(3000, 500*writers)
	cmd := exec.CommandContext(ctx, bin, "-test.run", "^$",
		"-test.bench", "^BenchmarkCreateParallel$", "-test.benchtime", fmt.Sprintf("%dx", n))
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "TMPDIR="+dir,
		"BENCH_WRITERS="+strconv.Itoa(writers), "BENCH_VALUE_BYTES="+strconv.Itoa(size))
	out, err := cmd.CombinedOutput()
	if err != nil {
		return load.CreateResult{}, fmt.Errorf("%s: %w: %s", bin, err, lastLines(out, 5))
	}
	res, err := parseDatastoreBench(out, writers)
	if err != nil {
		return res, err
	}
	res.OK = n
	return res, nil
}

// parseDatastoreBench reads the benchmark line of one level, e.g.
// "BenchmarkCreateParallel/writers=64-2  32000  36641 ns/op  27289 creates/s  3.1 p50-ms  4.0 p99-ms".
func parseDatastoreBench(out []byte, writers int) (load.CreateResult, error) {
	res := load.CreateResult{Clients: writers}
	prefix := fmt.Sprintf("BenchmarkCreateParallel/writers=%d", writers)
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 2 || (fields[0] != prefix && !strings.HasPrefix(fields[0], prefix+"-")) {
			continue
		}
		for i := 2; i+1 < len(fields); i += 2 {
			v, err := strconv.ParseFloat(fields[i], 64)
			if err != nil {
				continue
			}
			switch fields[i+1] {
			case "creates/s":
				res.PerSecond = v
			case "p50-ms":
				res.Latency.P50 = time.Duration(v * float64(time.Millisecond))
			case "p99-ms":
				res.Latency.P99 = time.Duration(v * float64(time.Millisecond))
			}
		}
		if res.PerSecond == 0 {
			return res, fmt.Errorf("no creates/s in %q", sc.Text())
		}
		count, _ := strconv.Atoi(fields[1])
		res.Elapsed = time.Duration(float64(count) / res.PerSecond * float64(time.Second))
		return res, nil
	}
	return res, fmt.Errorf("no %s line in the output: %s", prefix, lastLines(out, 5))
}

func lastLines(out []byte, n int) string {
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " | ")
}
