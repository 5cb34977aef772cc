package reliability

import (
	"context"
	"fmt"
	"os/exec"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// nodeLeaseDuration is the agents' Lease duration: a node whose Lease is
// not renewed for this long is marked NotReady by the node lifecycle
// controller.
const nodeLeaseDuration = 40 * time.Second

// kubectlRun is one invocation of the real kubectl against one server.
type kubectlRun struct {
	server        int
	write         bool
	call, return_ time.Duration // recorder time
	err           error
}

// kubectlProbe runs a real kubectl against every server once a second
// through a round, alternating a quorum read (`get nodes`) and a write
// (`annotate namespace`), each with a 5 s request timeout.
type kubectlProbe struct {
	r    *round
	bin  string
	kcfg string
	mu   sync.Mutex
	runs []kubectlRun
}

func (p *kubectlProbe) start() func() {
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for i := 1; i <= p.r.c.n; i++ {
		wg.Add(1)
		go func() { defer wg.Done(); p.loop(ctx, i) }()
	}
	return func() { cancel(); wg.Wait() }
}

// loop starts one kubectl a second against server, without waiting for
// the one before (a call stuck in a fault does not hide the next ones).
func (p *kubectlProbe) loop(ctx context.Context, server int) {
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	var wg sync.WaitGroup
	defer wg.Wait()
	for n := 0; ; n++ {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		wg.Add(1)
		go func() { defer wg.Done(); p.once(server, n) }()
	}
}

func (p *kubectlProbe) once(server, n int) {
	args := []string{"--kubeconfig", p.kcfg, "--server", "https://" + p.r.c.ips[server-1] + ":6443",
		"--request-timeout=5s"}
	write := n%2 == 1
	if write {
		args = append(args, "annotate", "namespace", namespace, "--overwrite",
			fmt.Sprintf("reliability.orch.io/kubectl-%d=%s-%d", server, p.r.name, n))
	} else {
		args = append(args, "get", "nodes", "-o", "name")
	}
	call := p.r.rec.now()
	out, err := exec.Command(p.bin, args...).CombinedOutput()
	if err != nil {
		err = fmt.Errorf("%w: %s", err, strings.TrimSpace(string(out)))
	}
	p.mu.Lock()
	p.runs = append(p.runs, kubectlRun{server: server, write: write, call: call, return_: p.r.rec.now(), err: err})
	p.mu.Unlock()
}

// check fails the round unless kubectl read and wrote through every server
// the fault did not hit while the fault was on, and adds to st.
func (p *kubectlProbe) check(st *stats) {
	p.mu.Lock()
	defer p.mu.Unlock()
	hit := map[int]bool{}
	for _, s := range p.r.hit {
		hit[s] = true
	}
	for _, run := range p.runs {
		if run.err == nil {
			st.kubectlOK++
		} else {
			st.kubectlFailed++
		}
	}
	if len(hit) == p.r.c.n {
		return // every server was hit (restart-all): nothing to reach during it
	}
	for s := 1; s <= p.r.c.n; s++ {
		if hit[s] {
			continue
		}
		read, write := p.during(s)
		if !read || !write {
			p.r.t.Errorf("%s: kubectl through server %d (not hit by the fault) between the fault and its end: read ok %v, write ok %v; its runs:\n%s",
				p.r.name, s, read, write, p.describe(s))
		}
	}
}

// during reports whether a read and a write through server s were both
// called after the fault and returned ok before it was undone.
func (p *kubectlProbe) during(s int) (read, write bool) {
	for _, run := range p.runs {
		if run.server != s || run.err != nil || run.call < p.r.faultT || run.return_ > p.r.undoT {
			continue
		}
		if run.write {
			write = true
		} else {
			read = true
		}
	}
	return read, write
}

func (p *kubectlProbe) describe(s int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "  fault at %v, undone at %v\n", p.r.faultT.Round(time.Millisecond), p.r.undoT.Round(time.Millisecond))
	for _, run := range p.runs {
		if run.server == s {
			fmt.Fprintf(&b, "  %v-%v write=%v err=%v\n", run.call.Round(time.Millisecond), run.return_.Round(time.Millisecond), run.write, run.err)
		}
	}
	return b.String()
}

// nodeWatch follows every node's Lease and Ready condition through all
// rounds of one cluster size, reading through whichever server answers.
// Gaps between consecutive renewals are charged to the fault of the round
// in which the renewal after the gap was seen.
type nodeWatch struct {
	c     *servers
	mu    sync.Mutex
	fault string
	last  map[string]time.Time       // node -> latest renewTime
	gaps  map[string][]time.Duration // fault -> renewal gaps
	worst map[string]time.Duration   // fault -> longest gap
	bad   []string                   // Ready != True observations
	stop  func()
}

func startNodeWatch(c *servers) *nodeWatch {
	w := &nodeWatch{c: c, last: map[string]time.Time{}, gaps: map[string][]time.Duration{}, worst: map[string]time.Duration{}}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); w.loop(ctx) }()
	w.stop = func() { cancel(); <-done }
	return w
}

func (w *nodeWatch) setFault(name string) {
	w.mu.Lock()
	w.fault = name
	w.mu.Unlock()
}

func (w *nodeWatch) loop(ctx context.Context) {
	tick := time.NewTicker(500 * time.Millisecond)
	defer tick.Stop()
	for n := 0; ; n++ {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		s := 1 + n%w.c.n
		if !w.c.alive(s) {
			continue
		}
		cs := w.c.client(s, 2*time.Second)
		leases, err := cs.CoordinationV1().Leases(corev1.NamespaceNodeLease).List(ctx, metav1.ListOptions{})
		if err != nil {
			continue
		}
		nodes, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
		if err != nil {
			continue
		}
		w.observe(leases.Items, nodes.Items)
	}
}

func (w *nodeWatch) observe(leases []coordinationv1.Lease, nodes []corev1.Node) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, l := range leases {
		if l.Spec.RenewTime == nil {
			continue
		}
		at := l.Spec.RenewTime.Time
		prev, ok := w.last[l.Name]
		if ok && at.After(prev) {
			g := at.Sub(prev)
			w.gaps[w.fault] = append(w.gaps[w.fault], g)
			w.worst[w.fault] = max(w.worst[w.fault], g)
		}
		if !ok || at.After(prev) {
			w.last[l.Name] = at
		}
	}
	for _, n := range nodes {
		for _, c := range n.Status.Conditions {
			if c.Type == corev1.NodeReady && c.Status != corev1.ConditionTrue {
				w.bad = append(w.bad, fmt.Sprintf("%s during %s: node %s Ready=%s (%s: %s)",
					time.Now().UTC().Format("15:04:05.000"), w.fault, n.Name, c.Status, c.Reason, c.Message))
			}
		}
	}
}

// waitRenewedAfter waits until every node's Lease was renewed after t
// (the agents work again after a fault) and fails the test if one is not
// within a Lease duration.
func (w *nodeWatch) waitRenewedAfter(r *round, t time.Time) {
	deadline := time.Now().Add(nodeLeaseDuration)
	for {
		w.mu.Lock()
		var late []string
		for name, at := range w.last {
			if !at.After(t) {
				late = append(late, fmt.Sprintf("%s (last renewed %s)", name, at.UTC().Format("15:04:05.000")))
			}
		}
		n := len(w.last)
		w.mu.Unlock()
		if n >= r.c.n && len(late) == 0 {
			return
		}
		if time.Now().After(deadline) {
			sort.Strings(late)
			r.t.Errorf("%s: node Leases not renewed within %v after the fault ended at %s (%d leases seen): %v",
				r.name, nodeLeaseDuration, t.UTC().Format("15:04:05.000"), n, late)
			return
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// check fails the test if a node was ever seen not Ready or a Lease went
// unrenewed for a Lease duration, and returns the longest gap per fault.
func (w *nodeWatch) check(r interface{ Errorf(string, ...any) }) map[string]time.Duration {
	w.stop()
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, b := range w.bad {
		r.Errorf("agents: %s", b)
	}
	for f, g := range w.worst {
		if g >= nodeLeaseDuration {
			r.Errorf("agents: during %s a node Lease went %v without renewal (the Lease lasts %v)", f, g, nodeLeaseDuration)
		}
	}
	return w.worst
}

func fmtGap(d time.Duration) string {
	if d == 0 {
		return "-"
	}
	return strconv.FormatFloat(d.Seconds(), 'f', 1, 64) + " s"
}
