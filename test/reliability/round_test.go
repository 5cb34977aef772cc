package reliability

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

const (
	keysPerRound     = 16
	clientsPerServer = 4
	warmup           = 2 * time.Second
	hold             = 6 * time.Second // how long a fault lasts
	cooldown         = 3 * time.Second // load after recovery
	checkTimeout     = 3 * time.Minute // porcupine, per round
)

// stats add up the rounds of one fault.
type stats struct {
	name                                        string
	rounds, ops, ok, failed, unknown, otherErrs int
	events, reconnects, relists                 int
	kubectlOK, kubectlFailed                    int
	violations, inconclusive, lost, watchErrs   int
	outages                                     []time.Duration
}

// round is one round of load with one fault injected.
type round struct {
	t       *testing.T
	c       *servers
	name    string
	keys    []string
	rec     *recorder
	faultT  time.Duration // when the fault was injected (recorder time)
	undoT   time.Duration // when it was undone
	hit     []int         // the servers the fault hit
	kubectl *kubectlProbe
	nodes   *nodeWatch // nil without agents
}

// fault injects a fault on the cluster and returns how to undo it.
type fault struct {
	name    string
	minimum int // servers needed
	inject  func(r *round) (undo func())
}

func faults() []fault {
	return []fault{
		{"kill-leader", 1, func(r *round) func() {
			l := r.c.leader(time.Minute)
			r.hit = []int{l}
			r.markAt(r.c.kill(l))
			if r.c.n == 1 {
				r.c.start(l) // nothing to fail over to: the outage is a restart
				return func() {}
			}
			return func() { r.c.start(l) }
		}},
		{"kill-follower", 2, func(r *round) func() {
			f := r.follower()
			r.hit = []int{f}
			r.markAt(r.c.kill(f))
			return func() { r.c.start(f) }
		}},
		{"partition-leader", 3, func(r *round) func() {
			l := r.c.leader(time.Minute)
			r.hit = []int{l}
			r.c.partition(l, r.c.others(l))
			r.mark()
			return func() { r.c.must("heal") }
		}},
		{"partition-minority", 3, func(r *round) func() {
			minority := r.minority()
			r.hit = minority
			majority := r.c.others(0)
			for _, m := range minority {
				majority = remove(majority, m)
			}
			for _, m := range minority {
				r.c.partition(m, majority)
			}
			r.mark()
			return func() { r.c.must("heal") }
		}},
		{"slow-disk-leader", 1, func(r *round) func() {
			l := r.c.leader(time.Minute)
			r.hit = []int{l}
			r.c.must("slow-disk", "--node", strconv.Itoa(l), "--delay-ms", "200")
			r.mark()
			return func() { r.c.must("fast-disk") }
		}},
		{"restart-all", 1, func(r *round) func() {
			r.hit = r.c.others(0)
			r.markAt(r.c.killAll())
			r.c.restartDead()
			return func() {}
		}},
	}
}

func remove(s []int, v int) []int {
	var out []int
	for _, x := range s {
		if x != v {
			out = append(out, x)
		}
	}
	return out
}

func (r *round) mark() { r.faultT = r.rec.now() }

func (r *round) markAt(t time.Time) { r.faultT = t.Sub(r.rec.start) }

// follower picks a random server that is not the leader.
func (r *round) follower() int {
	l := r.c.leader(time.Minute)
	o := r.c.others(l)
	return o[rand.IntN(len(o))]
}

// minority picks (n-1)/2 random followers.
func (r *round) minority() []int {
	o := r.c.others(r.c.leader(time.Minute))
	rand.Shuffle(len(o), func(i, j int) { o[i], o[j] = o[j], o[i] })
	return o[:(r.c.n-1)/2]
}

// run runs one round and adds its results to st.
func (r *round) run(f fault, st *stats) {
	startRV := r.listRV()
	ctx, stopWatch := context.WithCancel(context.Background())
	defer stopWatch()
	watchers := make([]*watcher, r.c.n)
	var wg sync.WaitGroup
	for i := 1; i <= r.c.n; i++ {
		watchers[i-1] = newWatcher(r.c.client(i, 0), i, startRV)
		wg.Add(1)
		go func() { defer wg.Done(); watchers[i-1].run(ctx) }()
	}
	clients := r.startClients()
	stopKubectl := r.kubectl.start()
	if r.nodes != nil {
		r.nodes.setFault(f.name)
	}
	time.Sleep(warmup)
	undo := f.inject(r)
	time.Sleep(hold)
	undo()
	r.undoT = r.rec.now()
	r.recover()
	time.Sleep(cooldown)
	clients()
	stopKubectl()
	if r.nodes != nil {
		r.nodes.waitRenewedAfter(r, r.rec.start.Add(r.undoT))
	}
	r.finalReads()
	h := r.rec.history()
	upTo := maxAckRV(h)
	r.waitWatchers(watchers, upTo)
	stopWatch()
	wg.Wait()
	r.check(h, watchers, upTo, st)
}

// listRV is the revision of a quorum list of the namespace.
func (r *round) listRV() int64 {
	for i := 0; ; i++ {
		s := 1 + i%r.c.n
		if r.c.alive(s) {
			l, err := r.c.client(s, 5*time.Second).CoreV1().ConfigMaps(namespace).List(context.Background(), metav1.ListOptions{})
			if err == nil {
				rv, _ := strconv.ParseInt(l.ResourceVersion, 10, 64)
				return rv
			}
		}
		if i > 600 {
			r.t.Fatalf("no server lists %s", namespace)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// startClients starts clientsPerServer clients on each server; the
// returned func stops them and waits.
func (r *round) startClients() func() {
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for i := 0; i < clientsPerServer*r.c.n; i++ {
		server := 1 + i%r.c.n
		k, err := newKV(r.c.config(server, 0))
		if err != nil {
			r.t.Fatal(err)
		}
		cl := &client{id: i, server: server, kv: k, rec: r.rec, keys: r.keys, seen: map[string]int64{},
			rng: rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), uint64(i)))}
		wg.Add(1)
		go func() { defer wg.Done(); cl.run(ctx) }()
	}
	return func() { cancel(); wg.Wait() }
}

// recover starts any killed server and waits until every server serves.
func (r *round) recover() {
	r.c.restartDead()
	for i := 1; i <= r.c.n; i++ {
		r.c.waitServing(i, 3*time.Minute)
	}
}

// finalReads adds a quorum list on every server to the history, as gets of
// every key of the round: every acknowledged write must be visible.
func (r *round) finalReads() {
	for i := 1; i <= r.c.n; i++ {
		k, err := newKV(r.c.config(i, 0))
		if err != nil {
			r.t.Fatal(err)
		}
		for _, key := range r.keys {
			var out Output
			call := r.rec.now()
			for n := 0; ; n++ {
				var err error
				if out, err = k.do(context.Background(), Input{Kind: Get, Key: key}); out.Result != Unknown {
					break
				}
				if n > 100 {
					r.t.Fatalf("server %d: final read of %s: %v", i, key, err)
				}
				time.Sleep(200 * time.Millisecond)
			}
			r.rec.add(Op{Client: 1000 + i, Input: Input{Kind: Get, Key: key}, Output: out, Call: call, Return: r.rec.now()})
		}
	}
}

func maxAckRV(h []Op) int64 {
	var m int64
	for _, op := range h {
		if op.Input.Kind != Get && op.Output.Result == OK {
			m = max(m, op.Output.RV)
		}
	}
	return m
}

func (r *round) waitWatchers(ws []*watcher, upTo int64) {
	deadline := time.Now().Add(time.Minute)
	for _, w := range ws {
		for w.lastRV() < upTo && time.Now().Before(deadline) {
			time.Sleep(100 * time.Millisecond)
		}
	}
}

// check checks the round's history and watch logs and adds to st.
func (r *round) check(h []Op, ws []*watcher, upTo int64, st *stats) {
	st.rounds++
	r.kubectl.check(st)
	r.rec.mu.Lock()
	st.otherErrs += r.rec.other
	r.rec.mu.Unlock()
	for _, op := range h {
		if op.Client >= 1000 {
			continue
		}
		st.ops++
		switch op.Output.Result {
		case OK:
			st.ok++
		case Unknown:
			st.unknown++
		default:
			st.failed++
		}
	}
	if d, ok := outage(h, r.faultT); ok {
		st.outages = append(st.outages, d)
	}
	res := Check(h, checkTimeout)
	switch {
	case res.Result == porcupine.Illegal:
		st.violations++
		path := filepath.Join(os.TempDir(), "orch-reliability-"+r.name+".html")
		_ = porcupine.VisualizePath(Model(), res.Info, path)
		r.t.Errorf("%s: history is not linearizable (visualization: %s)\n%s", r.name, path, IllegalKeys(h, checkTimeout))
	case res.Result == porcupine.Unknown:
		st.inconclusive++
		r.t.Errorf("%s: the linearizability check timed out after %v", r.name, checkTimeout)
	}
	if len(res.DuplicateRVs) > 0 {
		st.violations++
		r.t.Errorf("%s: revisions given to two acknowledged writes: %v", r.name, res.DuplicateRVs)
	}
	for _, lw := range lostWrites(h) {
		st.lost++
		r.t.Errorf("%s: %s", r.name, lw)
	}
	for _, w := range ws {
		l := w.log()
		st.events += len(l.Events)
		st.reconnects += l.Reconnects
		st.relists += l.Relists
		for _, p := range CheckWatch(&l, h, upTo) {
			st.watchErrs++
			r.t.Errorf("%s: watch: %s", r.name, p)
		}
	}
}

// outage is the time from the fault to the return of the first write that
// was called after it and acknowledged.
func outage(h []Op, at time.Duration) (time.Duration, bool) {
	best := time.Duration(math.MaxInt64)
	for _, op := range h {
		if op.Input.Kind != Get && op.Output.Result == OK && op.Call >= at {
			best = min(best, op.Return-at)
		}
	}
	return best, best != time.Duration(math.MaxInt64)
}

// lostWrites compares the final reads (clients >= 1000) with the last
// acknowledged write of each key: a final read may not show an older
// revision, nor miss a key whose last acknowledged write created or
// updated it unless a delete may have followed.
func lostWrites(h []Op) []string {
	last := map[string]Op{}
	for _, op := range h {
		if op.Client < 1000 && op.Input.Kind != Get && op.Output.Result == OK && op.Output.RV > last[op.Input.Key].Output.RV {
			last[op.Input.Key] = op
		}
	}
	var lost []string
	for _, op := range h {
		if op.Client < 1000 {
			continue
		}
		w, ok := last[op.Input.Key]
		switch {
		case !ok:
		case op.Output.Result == OK && op.Output.RV < w.Output.RV:
			lost = append(lost, fmt.Sprintf("server %d reads %s at rv=%d, older than the acknowledged %s at rv=%d",
				op.Client-1000, op.Input.Key, op.Output.RV, w.Input.Kind, w.Output.RV))
		case op.Output.Result == NotFound && w.Input.Kind != Delete && !deleteAfter(h, w):
			lost = append(lost, fmt.Sprintf("server %d does not find %s, acknowledged %s at rv=%d",
				op.Client-1000, op.Input.Key, w.Input.Kind, w.Output.RV))
		}
	}
	return lost
}

// deleteAfter reports whether a delete of w's key that may have applied
// (acknowledged or unknown) did not end before w was called.
func deleteAfter(h []Op, w Op) bool {
	for _, op := range h {
		if op.Client < 1000 && op.Input.Kind == Delete && op.Input.Key == w.Input.Key &&
			(op.Output.Result == OK || op.Output.Result == Unknown) &&
			(op.Output.Result == Unknown || op.Return >= w.Call) {
			return true
		}
	}
	return false
}

// percentile returns the p-th percentile (nearest rank) of ds.
func percentile(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	rank := int(math.Ceil(p / 100 * float64(len(s))))
	return s[max(rank, 1)-1]
}
