package report

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/orch/orch/tools/bench/internal/load"
)

// Target is everything measured on one server.
type Target struct {
	Name            string              `json:"name"`
	Version         string              `json:"version,omitempty"`
	Setup           string              `json:"setup,omitempty"` // servers and where the clients go, for clusters
	Errors          []string            `json:"errors,omitempty"`
	StartupToReady  time.Duration       `json:"startup_to_ready_ns"`
	IdleSeconds     float64             `json:"idle_seconds"`
	IdleRSSKiB      int64               `json:"idle_rss_kib"`
	IdleRSSByProc   map[string]int64    `json:"idle_rss_by_process_kib,omitempty"`
	IdleCPUSeconds  float64             `json:"idle_cpu_seconds"`
	Creates         []load.CreateResult `json:"creates"`
	Watch           *load.WatchResult   `json:"watch,omitempty"`
	RSSAfterLoadKiB int64               `json:"rss_after_load_kib"`
}

// Run is one benchmark run.
type Run struct {
	Started time.Time `json:"started"`
	Machine string    `json:"machine"`
	Params  string    `json:"params"`
	Targets []*Target `json:"targets"`
}

func ms(d time.Duration) string { return fmt.Sprintf("%.2f ms", float64(d)/float64(time.Millisecond)) }

func mib(kib int64) string {
	if kib == 0 {
		return "n/a"
	}
	return fmt.Sprintf("%.1f MiB", float64(kib)/1024)
}

// Markdown writes the side-by-side table: one row per metric, one column per target.
func (r *Run) Markdown(w io.Writer) {
	fmt.Fprintf(w, "Run started %s. %s\n\n", r.Started.UTC().Format(time.RFC3339), r.Params)
	if r.Machine != "" {
		fmt.Fprintf(w, "Machine: %s\n\n", r.Machine)
	}
	header := []string{"metric"}
	for _, t := range r.Targets {
		header = append(header, fmt.Sprintf("%s (%s)", t.Name, t.Version))
	}
	row(w, header...)
	row(w, strings.Split(strings.Repeat("---,", len(header)), ",")[:len(header)]...)
	for _, m := range r.rows() {
		row(w, m...)
	}
	r.ratios(w)
	for _, t := range r.Targets {
		for _, e := range t.Errors {
			fmt.Fprintf(w, "\n**%s error:** `%s`\n", t.Name, oneLine(e))
		}
	}
}

// ratios writes orch's creates/s and p99 against the baseline's, and its
// creates/s against its datastore alone, per level: how issue 14 states
// the API's goals.
func (r *Run) ratios(w io.Writer) {
	orch, base, store := r.target("orch"), r.target("baseline"), r.target("datastore")
	if orch == nil || (base == nil && store == nil) {
		return
	}
	fmt.Fprintf(w, "\n")
	row(w, "clients", "orch / baseline creates/s", "orch / baseline p99", "orch / datastore alone creates/s")
	row(w, "---", "---", "---", "---")
	for _, level := range r.levels() {
		o, ok := findLevel(orch, level)
		if !ok {
			continue
		}
		perSecond := func(c load.CreateResult) float64 { return c.PerSecond }
		p99 := func(c load.CreateResult) float64 { return float64(c.Latency.P99) }
		row(w, fmt.Sprint(level),
			ratio(o, base, level, perSecond),
			ratio(o, base, level, p99),
			ratio(o, store, level, perSecond))
	}
}

func ratio(o load.CreateResult, other *Target, level int, f func(load.CreateResult) float64) string {
	if other == nil {
		return "n/a"
	}
	c, ok := findLevel(other, level)
	if !ok || f(c) == 0 {
		return "n/a"
	}
	return fmt.Sprintf("%.2fx", f(o)/f(c))
}

func (r *Run) target(name string) *Target {
	for _, t := range r.Targets {
		if t.Name == name {
			return t
		}
	}
	return nil
}

func (r *Run) rows() [][]string {
	var out [][]string
	add := func(name string, f func(*Target) string) {
		line := []string{name}
		for _, t := range r.Targets {
			line = append(line, f(t))
		}
		out = append(out, line)
	}
	if r.anySetup() {
		add("servers, clients on", func(t *Target) string {
			if t.Setup == "" {
				return "1 server"
			}
			return t.Setup
		})
	}
	for _, level := range r.levels() {
		add(fmt.Sprintf("creates/s, %d clients", level), func(t *Target) string {
			c, ok := findLevel(t, level)
			if !ok {
				return "n/a"
			}
			return fmt.Sprintf("**%.0f** (%d ok, %d err, %.1f s)", c.PerSecond, c.OK, c.Errors, c.Elapsed.Seconds())
		})
		add(fmt.Sprintf("create p50 / p99, %d clients", level), func(t *Target) string {
			c, ok := findLevel(t, level)
			if !ok {
				return "n/a"
			}
			return ms(c.Latency.P50) + " / " + ms(c.Latency.P99)
		})
		add(fmt.Sprintf("CPU cores used, server / load generator, %d clients", level), func(t *Target) string {
			c, ok := findLevel(t, level)
			if !ok {
				return "n/a"
			}
			return fmt.Sprintf("%.2f / %.2f", c.ServerCores, c.ClientCores)
		})
	}
	add("watch delivery p50 / p99 (from ack)", func(t *Target) string {
		if t.Watch == nil {
			return "n/a"
		}
		return ms(t.Watch.Latency.P50) + " / " + ms(t.Watch.Latency.P99)
	})
	add("watch delivery p50 / p99 (from send)", func(t *Target) string {
		if t.Watch == nil {
			return "n/a"
		}
		return ms(t.Watch.FromSend.P50) + " / " + ms(t.Watch.FromSend.P99)
	})
	add("watch deliveries received / expected", func(t *Target) string {
		if t.Watch == nil {
			return "n/a"
		}
		return fmt.Sprintf("%d / %d (%d watchers x %d writes)", t.Watch.Received, t.Watch.Expected, t.Watch.Watchers, t.Watch.Writes)
	})
	add("start to /readyz OK", func(t *Target) string {
		if t.StartupToReady == 0 {
			return "n/a"
		}
		return ms(t.StartupToReady)
	})
	add("idle RSS", func(t *Target) string { return mib(t.IdleRSSKiB) + byProc(t.IdleRSSByProc) })
	add("idle CPU", func(t *Target) string {
		if t.IdleSeconds == 0 {
			return "n/a"
		}
		return fmt.Sprintf("%.2f s in %.0f s (%.1f%% of a core)", t.IdleCPUSeconds, t.IdleSeconds, 100*t.IdleCPUSeconds/t.IdleSeconds)
	})
	add("RSS after load", func(t *Target) string { return mib(t.RSSAfterLoadKiB) })
	return out
}

func (r *Run) anySetup() bool {
	for _, t := range r.Targets {
		if t.Setup != "" {
			return true
		}
	}
	return false
}

// byProc lists the RSS of each process when there are several: the
// baseline's kube-apiserver then kine, others (cluster servers) by name.
func byProc(m map[string]int64) string {
	if len(m) < 2 {
		return ""
	}
	names := slices.Sorted(maps.Keys(m))
	if _, ok := m["kube-apiserver"]; ok {
		names = slices.DeleteFunc(names, func(n string) bool { return n == "kube-apiserver" })
		names = append([]string{"kube-apiserver"}, names...)
	}
	var parts []string
	for _, name := range names {
		parts = append(parts, name+" "+mib(m[name]))
	}
	return " (" + strings.Join(parts, " + ") + ")"
}

func (r *Run) levels() []int {
	seen := map[int]bool{}
	var out []int
	for _, t := range r.Targets {
		for _, c := range t.Creates {
			if !seen[c.Clients] {
				seen[c.Clients] = true
				out = append(out, c.Clients)
			}
		}
	}
	return out
}

func findLevel(t *Target, clients int) (load.CreateResult, bool) {
	for _, c := range t.Creates {
		if c.Clients == clients {
			return c, true
		}
	}
	return load.CreateResult{}, false
}

func row(w io.Writer, cells ...string) {
	fmt.Fprintf(w, "| %s |\n", strings.Join(cells, " | "))
}

func oneLine(s string) string {
	s = strings.ReplaceAll(s, "\n", " ")
	if len(s) > 400 {
		s = s[:400] + "..."
	}
	return s
}
