package main

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"time"
)

// results is everything one run measured (durations in nanoseconds in JSON).
type results struct {
	Started    time.Time
	Machine    string
	Pods       int
	IdlePods   int
	Idle       time.Duration
	IdleStarts []time.Duration // the idle phase's pods (first pods of the run)
	OrchStarts []time.Duration // create → Running and Ready, timed pods
	BaseStarts []time.Duration // containerd NewContainer+NewTask+Start
	MemStart   procMem         // node Ready, no pods
	MemIdle    procMem         // IdlePods pods, after Idle
	IdlePeak   procMem         // highest RSS sampled every 5 s in Idle's second half (RSS fields only)
	MemAfter   procMem         // IdlePods + Pods pods, right after the timed phase
	IdleCPU    procCPU         // during Idle's second half
	// IdleCPUWindow is how long IdleCPU was measured.
	IdleCPUWindow time.Duration
	Bursts        []burstResult
	Single        bool // orch server with its own agent
	Err           string
}

func (r *results) write(md, js string) error {
	if js != "" {
		b, err := json.MarshalIndent(r, "", "  ")
		if err != nil {
			return err
		}
		if err := os.WriteFile(js, b, 0o644); err != nil {
			return err
		}
	}
	text := r.markdown()
	fmt.Print(text)
	if md != "" {
		return os.WriteFile(md, []byte(text), 0o644)
	}
	return nil
}

func ms(d time.Duration) string { return fmt.Sprintf("%.1f ms", float64(d)/float64(time.Millisecond)) }

func (r *results) markdown() string {
	var b strings.Builder
	fmt.Fprintf(&b, "Pod benchmark run of %s UTC\n\nMachine: %s\n\n", r.Started.Format("2006-01-02 15:04"), r.Machine)
	if r.Err != "" {
		fmt.Fprintf(&b, "**Errors:** %s\n\n", r.Err)
	}
	o, c := summarize(r.OrchStarts), summarize(r.BaseStarts)
	b.WriteString("| start latency | n | p50 | p90 | p99 | min | max | mean |\n| --- | --- | --- | --- | --- | --- | --- | --- |\n")
	row := func(name string, s summary) {
		fmt.Fprintf(&b, "| %s | %d | %s | %s | %s | %s | %s | %s |\n", name, s.N, ms(s.P50), ms(s.P90), ms(s.P99), ms(s.Min), ms(s.Max), ms(s.Mean))
	}
	row("orch pod: create → Running and Ready", o)
	row("containerd: NewContainer + NewTask + Start", c)
	row(fmt.Sprintf("(orch idle-phase pods, the run's first %d)", r.IdlePods), summarize(r.IdleStarts))
	for _, bu := range r.Bursts {
		fmt.Fprintf(&b, "\n%d pods created at once → all Running and Ready: **%s** (node CPU meanwhile %.2f s)", bu.Pods, ms(bu.AllReady), bu.CPU)
		if bu.Baseline > 0 {
			fmt.Fprintf(&b, "; containerd alone, %d containers at once: %s (ratio %.2fx)", bu.Pods, ms(bu.Baseline),
				float64(bu.AllReady)/float64(bu.Baseline))
		}
		b.WriteString("\n")
	}
	if c.P99 > 0 {
		fmt.Fprintf(&b, "\norch p99 / containerd p99 = **%.2fx** (goal <= 1.5x); p50 ratio %.2fx\n",
			float64(o.P99)/float64(c.P99), float64(o.P50)/float64(max(c.P50, 1)))
	}
	r.steadyMarkdown(&b)
	b.WriteString("\n| memory in MiB (/proc/<pid>/status VmRSS = RssAnon + RssFile (+ RssShmem, 0 here); PSS from smaps_rollup) | server + agent | agent alone | server alone | managed containerd (not counted) |\n| --- | --- | --- | --- | --- |\n")
	mrow := func(name string, m procMem) {
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s |\n", name, m.ServerAgent, m.Agent, m.Server, m.Containerd)
	}
	mrow("node Ready, 0 pods", r.MemStart)
	mrow(fmt.Sprintf("**%d pods, after %s idle**", r.IdlePods, r.Idle), r.MemIdle)
	mrow(fmt.Sprintf("%d pods, right after the timed phase", r.IdlePods+len(r.OrchStarts)), r.MemAfter)
	fmt.Fprintf(&b, "\nHighest RSS sampled every 5 s in the second half of the idle: server + agent %.1f, agent %.1f, server %.1f MiB.\n",
		mib(r.IdlePeak.ServerAgent.RSS), mib(r.IdlePeak.Agent.RSS), mib(r.IdlePeak.Server.RSS))
	fmt.Fprintf(&b, "\nResident memory by mapping after the idle (MiB; the executable's code, read-only data incl. .gopclntab, writable data, all anonymous memory, other files):\n\n- agent: %s\n- server: %s\n",
		r.MemIdle.Agent.Split, r.MemIdle.Server.Split)
	fmt.Fprintf(&b, "\nGoals: server + agent <= 80 MB, agent alone <= 30 MB (idle, %d pods). CPU during the %s idle: server %.2f s, agent %.2f s.\n",
		r.IdlePods, r.Idle, r.IdleCPU.Server, r.IdleCPU.Agent)
	return b.String()
}

// steadyMarkdown is the issue-14 summary of the idle: the orch process(es),
// the whole node in PSS (orch + containerd + shims) and orch's CPU.
func (r *results) steadyMarkdown(b *strings.Builder) {
	m := r.MemIdle
	cpu := r.pctOfCore(r.IdleCPU.Server + r.IdleCPU.Agent)
	who := "orch server + orch agent"
	if r.Single {
		who = "orch server (with its agent)"
	}
	fmt.Fprintf(b, "\nSteady state, %d pods (httpd, HTTP readiness + exec liveness probes every 10 s), after %s:\n\n", r.IdlePods, r.Idle)
	fmt.Fprintf(b, "- %s: **RSS %.1f MiB**, PSS %.1f MiB\n", who, mib(m.ServerAgent.RSS), mib(m.ServerAgent.PSS))
	perShim := 0.0
	if m.ShimCount > 0 {
		perShim = mib(m.Shims.PSS) / float64(m.ShimCount)
	}
	fmt.Fprintf(b, "- whole node (orch + its containerd + %d shims): **PSS %.1f MiB** (containerd %.1f, shims %.1f = %.1f each), RSS sum %.1f MiB\n",
		m.ShimCount, mib(m.Node.PSS), mib(m.Containerd.PSS), mib(m.Shims.PSS), perShim, mib(m.Node.RSS))
	fmt.Fprintf(b, "- orch CPU over the idle's last %s: **%.2f %% of a core**; containerd %.2f %%, shims %.2f %%\n",
		r.IdleCPUWindow.Round(time.Second), cpu, r.pctOfCore(r.IdleCPU.Containerd), r.pctOfCore(r.IdleCPU.Shims))
}

// pctOfCore is CPU seconds over the idle's CPU window as % of one core.
func (r *results) pctOfCore(sec float64) float64 {
	if r.IdleCPUWindow <= 0 {
		return 0
	}
	return 100 * sec / r.IdleCPUWindow.Seconds()
}
