package proxy

import (
	"fmt"
	"strings"
	"time"

	"go.uber.org/zap"
)

// syncer turns service ports into kernel rules, remembering what it wrote
// so the next sync only rewrites what changed.
type syncer struct {
	log   *zap.Logger
	be    backend
	gen   *generator
	ct    conntracker
	have  applied // the fixed chains' rules; nil: unknown, the next sync is a full one
	frags map[string]*fragment
	ports map[string]*servicePort // what frags were rendered from
	udp   map[string]udpPort
	// Rules in the kernel's tables, per table, for the cache hint: in
	// other software's chains (built-in ones included) as of the last
	// full sync, and in the proxy's own chains after the last sync.
	foreign, own map[string]int
	hintRatio    int  // see wantsHint
	hintOff      bool // a restore with the hint failed: no more hints
}

// hintRatio is the default ratio of the chain-name list's cost (lines x
// chains, in string comparisons) to a table dump's (rules in the table)
// above which a restore is given the cache hint: iptables-nft dumps a
// rule in ~40 us and compares two chain names in ~5 ns (1.8.9, measured
// on a 2-core VM), about 8,000 comparisons per rule, rounded up.
const hintRatio = 10000

// wantsHint is the cacheHint of a backend that takes one.
func (s *syncer) wantsHint(table string, lines, chains int) bool {
	existing := s.foreign[table] + s.own[table]
	return lines*chains/2 > existing*s.hintRatio
}

// syncStats describe one sync.
type syncStats struct {
	Full             bool
	Rules            int // rules in the whole ruleset
	Chains           int // chains in the whole ruleset
	Written, Deleted int // chains rewritten / deleted by this sync
	RulesWritten     int
	Hinted           []string // tables whose restore had the cache hint
	Large            bool     // large cluster mode
	Took             time.Duration
}

func newSyncer(log *zap.Logger, be backend, gen *generator, ct conntracker) *syncer {
	return &syncer{log: log, be: be, gen: gen, ct: ct, udp: map[string]udpPort{},
		foreign: map[string]int{}, own: map[string]int{}, hintRatio: hintRatio}
}

// sync programs ports. A full sync (or the first, or one after a failure)
// reads the owned chains from the kernel, rewrites all of them, deletes the
// stale ones and puts back missing jumps.
func (s *syncer) sync(ports []*servicePort, full bool) (syncStats, error) {
	start := time.Now()
	s.setLarge(ports)
	frags, nextPorts, changed := s.fragments(ports)
	full = full || s.have == nil
	var want ruleset
	var have applied
	if full {
		var err error
		if have, err = s.prepareFull(); err != nil {
			s.have = nil
			return syncStats{Full: true}, err
		}
		want = s.gen.assemble(frags, true)
	} else {
		want, have = s.partial(frags, changed)
	}
	var hint cacheHint
	if s.be.NFT() && !s.hintOff {
		hint = s.wantsHint
	}
	p := makePlan(want, have, hint)
	if !p.noChange {
		if err := s.be.Restore(p.input); err != nil {
			s.have = nil
			if len(p.hinted) > 0 { // in case this iptables rejects "-S" in a restore
				s.hintOff = true
				s.log.Warn("iptables-restore failed with the cache hint; not using it any more", zap.Error(err))
			}
			return syncStats{Full: full}, err
		}
	}
	s.have = fixedOnly(p.next, s.gen.n)
	s.frags, s.ports = frags, nextPorts
	s.flushStaleUDP(ports)
	st := syncStats{Full: full, Written: p.written, Deleted: p.deleted, RulesWritten: p.rules,
		Hinted: p.hinted, Large: s.gen.large, Took: time.Since(start)}
	for table, chains := range s.have {
		st.Chains += len(chains)
		s.own[table] = 0
		for c := range chains {
			s.own[table] += len(want[table][c])
		}
	}
	for _, f := range frags {
		st.Chains += len(f.chains)
		for _, lines := range f.chains {
			s.own[tableNAT] += len(lines)
		}
	}
	st.Rules = s.own[tableNAT] + s.own[tableFilter]
	return st, nil
}

// setLarge switches kube-proxy's large cluster mode on or off by the
// number of endpoints; fragments rendered in the other mode are rendered
// again (see fragments).
func (s *syncer) setLarge(ports []*servicePort) {
	n := 0
	for _, sp := range ports {
		n += len(sp.endpoints)
	}
	if large := n > largeClusterEndpoints; large != s.gen.large {
		s.gen.large = large
		s.log.Info("large cluster mode: no comments on endpoint rules", zap.Bool("on", large), zap.Int("endpoints", n))
	}
}

// fragments renders the ports, reusing the fragments of unchanged ones;
// changed lists the keys added, changed or removed since the last sync.
func (s *syncer) fragments(ports []*servicePort) (map[string]*fragment, map[string]*servicePort, []string) {
	frags := make(map[string]*fragment, len(ports))
	next := make(map[string]*servicePort, len(ports))
	var changed []string
	for _, sp := range ports {
		k := portKey(sp)
		next[k] = sp
		if old, ok := s.ports[k]; ok && samePort(old, sp) && s.frags[k].large == s.gen.large {
			frags[k] = s.frags[k]
			continue
		}
		frags[k] = s.gen.fragment(sp)
		changed = append(changed, k)
	}
	for k := range s.ports {
		if _, ok := next[k]; !ok {
			changed = append(changed, k)
		}
	}
	return frags, next, changed
}

// partial is what a partial sync compares: the fixed chains plus the
// chains of changed ports, new (want) and as last written (have).
func (s *syncer) partial(frags map[string]*fragment, changed []string) (ruleset, applied) {
	want := s.gen.assemble(frags, false)
	have := s.have.clone()
	for _, k := range changed {
		if f, ok := frags[k]; ok {
			for c, lines := range f.chains {
				want[tableNAT][c] = lines
			}
		}
		if f, ok := s.frags[k]; ok {
			for c, lines := range f.chains {
				have[tableNAT][c] = strings.Join(lines, "\n")
			}
		}
	}
	return want, have
}

// fixedOnly keeps the fixed chains of a.
func fixedOnly(a applied, n chainNames) applied {
	out := applied{tableNAT: {}, tableFilter: {}}
	for table, fixed := range map[string][]string{tableNAT: n.fixedNAT(), tableFilter: n.fixedFilter()} {
		for _, c := range fixed {
			if v, ok := a[table][c]; ok {
				out[table][c] = v
			}
		}
	}
	return out
}

// prepareFull reads the kernel's state (owned chains, rules unknown) and
// puts back missing jumps (with go-iptables, only when the saved built-in
// chains lack them, so a steady state costs no extra iptables call); the
// fixed chains they lead to are created first if needed.
func (s *syncer) prepareFull() (applied, error) {
	a := applied{}
	present := map[string]map[string]bool{}
	s.foreign, s.own = map[string]int{}, map[string]int{}
	for _, table := range tableOrder {
		out, err := s.be.Save(table)
		if err != nil {
			return nil, fmt.Errorf("reading the %s table: %w", table, err)
		}
		sv := parseSave(out)
		present[table] = sv.builtin
		a[table] = map[string]string{}
		for _, c := range sv.chains {
			if s.gen.n.owned(table, c) {
				a[table][c] = unknownRules
			}
		}
		for c, n := range sv.rules {
			if s.gen.n.owned(table, c) {
				s.own[table] += n
			} else {
				s.foreign[table] += n
			}
		}
	}
	missing := missingJumps(s.gen.n, present)
	if len(missing) == 0 {
		return a, nil
	}
	if err := s.installJumps(a, missing, present); err != nil {
		return nil, err
	}
	return a, nil
}
