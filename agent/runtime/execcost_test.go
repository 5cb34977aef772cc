package runtime

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestExecCost measures what an exec probe costs: this process's CPU
// (the agent's side) and containerd's and its shims' per exec of `true`,
// as an exec liveness probe runs it. It is a measurement, not a check:
// it runs only with ORCH_MEASURE_EXEC=<execs> (docs/benchmarks.md).
func TestExecCost(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("ORCH_MEASURE_EXEC"))
	if n <= 0 {
		t.Skip("a measurement: set ORCH_MEASURE_EXEC=<number of execs>")
	}
	d := sharedDaemon(t)
	r := newRuntime(t, d)
	s := runningSleeper(t, r, "main", true)
	ctx := context.Background()
	var out bytes.Buffer
	if _, err := r.Exec(ctx, s.ID, ExecRequest{Cmd: []string{"true"}, Stdout: &out, Stderr: &out}); err != nil {
		t.Fatal(err) // the first exec reads the container's spec: not timed
	}
	self0, ctrd0 := selfCPU(), cpuOfCmdlines(d.m.cfg.StateDir)
	start := time.Now()
	for range n {
		if code, err := r.Exec(ctx, s.ID, ExecRequest{Cmd: []string{"true"}, Stdout: &out, Stderr: &out}); err != nil || code != 0 {
			t.Fatalf("exec: %d, %v", code, err)
		}
	}
	wall := time.Since(start)
	self, ctrd := selfCPU()-self0, cpuOfCmdlines(d.m.cfg.StateDir)-ctrd0
	per := func(d time.Duration) string { return (d / time.Duration(n)).Round(time.Microsecond).String() }
	t.Logf("%d execs: per exec %s wall, CPU %s here (the agent's side), %s containerd + shims",
		n, per(wall), per(self), per(ctrd))
}

// selfCPU is this process's user + system CPU time.
func selfCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// cpuOfCmdlines is the CPU time of the processes whose command line holds
// s (the test containerd and its shims name its state dir).
func cpuOfCmdlines(s string) time.Duration {
	procs, _ := filepath.Glob("/proc/[0-9]*")
	var ticks int64
	for _, p := range procs {
		cmd, err := os.ReadFile(p + "/cmdline")
		if err != nil || !bytes.Contains(cmd, []byte(s)) {
			continue
		}
		stat, err := os.ReadFile(p + "/stat")
		if err != nil {
			continue
		}
		f := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+2:]))
		u, _ := strconv.ParseInt(f[11], 10, 64) // utime: field 14
		k, _ := strconv.ParseInt(f[12], 10, 64) // stime: field 15
		ticks += u + k
	}
	return time.Duration(ticks) * time.Second / 100 // USER_HZ
}
