package main

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"
)

// runRow is one run's figures for the issue-14 table.
type runRow struct {
	OrchRSS, NodePSS, ContainerdPSS, ShimsPSS float64 // MiB
	CPU, RuntimeCPU                           float64 // % of a core: orch; containerd and its shims
	Bursts, BaseBursts                        map[int]time.Duration
	P50Ratio, P99Ratio                        float64
	OrchP50, OrchP99, BaseP50, BaseP99        time.Duration
}

func rowOf(r *results) runRow {
	m := r.MemIdle
	row := runRow{OrchRSS: mib(m.ServerAgent.RSS), NodePSS: mib(m.Node.PSS), ContainerdPSS: mib(m.Containerd.PSS),
		ShimsPSS: mib(m.Shims.PSS), Bursts: map[int]time.Duration{}, BaseBursts: map[int]time.Duration{}}
	row.CPU = r.pctOfCore(r.IdleCPU.Server + r.IdleCPU.Agent)
	row.RuntimeCPU = r.pctOfCore(r.IdleCPU.Containerd + r.IdleCPU.Shims)
	for _, b := range r.Bursts {
		row.Bursts[b.Pods] = b.AllReady
		if b.Baseline > 0 {
			row.BaseBursts[b.Pods] = b.Baseline
		}
	}
	o, c := summarize(r.OrchStarts), summarize(r.BaseStarts)
	row.OrchP50, row.OrchP99, row.BaseP50, row.BaseP99 = o.P50, o.P99, c.P50, c.P99
	if c.P50 > 0 && c.P99 > 0 {
		row.P50Ratio, row.P99Ratio = float64(o.P50)/float64(c.P50), float64(o.P99)/float64(c.P99)
	}
	return row
}

// summarizeFiles reads the JSON results of several runs and prints each
// run's figures and their medians as a Markdown table (`podbench
// summarize a.json b.json c.json`).
func summarizeFiles(paths []string) error {
	var rows []runRow
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		var r results
		if err := json.Unmarshal(data, &r); err != nil {
			return fmt.Errorf("%s: %w", p, err)
		}
		if r.Err != "" {
			return fmt.Errorf("%s: the run failed: %s", p, r.Err)
		}
		rows = append(rows, rowOf(&r))
	}
	fmt.Print(summaryMarkdown(rows))
	return nil
}

func summaryMarkdown(rows []runRow) string {
	var b strings.Builder
	b.WriteString("| measure |")
	for i := range rows {
		fmt.Fprintf(&b, " run %d |", i+1)
	}
	b.WriteString(" **median** |\n|---|")
	for range rows {
		b.WriteString("---|")
	}
	b.WriteString("---|\n")
	line := func(name string, f func(runRow) float64, format string) {
		vals := make([]float64, len(rows))
		fmt.Fprintf(&b, "| %s |", name)
		for i, r := range rows {
			vals[i] = f(r)
			fmt.Fprintf(&b, " "+format+" |", vals[i])
		}
		fmt.Fprintf(&b, " **"+format+"** |\n", median(vals))
	}
	line("orch RSS (MiB)", func(r runRow) float64 { return r.OrchRSS }, "%.1f")
	line("whole node PSS (MiB)", func(r runRow) float64 { return r.NodePSS }, "%.1f")
	line("  of which containerd PSS", func(r runRow) float64 { return r.ContainerdPSS }, "%.1f")
	line("  of which shims PSS", func(r runRow) float64 { return r.ShimsPSS }, "%.1f")
	line("orch CPU (% of a core)", func(r runRow) float64 { return r.CPU }, "%.2f")
	line("  containerd + shims CPU (% of a core)", func(r runRow) float64 { return r.RuntimeCPU }, "%.2f")
	for _, n := range burstSizes(rows) {
		line(fmt.Sprintf("%d pods at once → all Ready (s)", n), func(r runRow) float64 { return r.Bursts[n].Seconds() }, "%.2f")
		if slices.ContainsFunc(rows, func(r runRow) bool { return r.BaseBursts[n] > 0 }) {
			line(fmt.Sprintf("  containerd alone, %d at once (s)", n), func(r runRow) float64 { return r.BaseBursts[n].Seconds() }, "%.2f")
		}
	}
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	line("one at a time: orch p50 (ms)", func(r runRow) float64 { return ms(r.OrchP50) }, "%.1f")
	line("one at a time: containerd p50 (ms)", func(r runRow) float64 { return ms(r.BaseP50) }, "%.1f")
	line("one at a time: orch p99 (ms)", func(r runRow) float64 { return ms(r.OrchP99) }, "%.1f")
	line("one at a time: containerd p99 (ms)", func(r runRow) float64 { return ms(r.BaseP99) }, "%.1f")
	line("p50 ratio orch / containerd", func(r runRow) float64 { return r.P50Ratio }, "%.2f")
	line("p99 ratio orch / containerd", func(r runRow) float64 { return r.P99Ratio }, "%.2f")
	return b.String()
}

func burstSizes(rows []runRow) []int {
	var out []int
	for _, r := range rows {
		for n := range r.Bursts {
			if !slices.Contains(out, n) {
				out = append(out, n)
			}
		}
	}
	slices.Sort(out)
	return out
}

// median of vals (the mean of the middle two for an even count).
func median(vals []float64) float64 {
	if len(vals) == 0 {
		return 0
	}
	s := slices.Clone(vals)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
