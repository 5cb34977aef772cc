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
}

// syncStats describe one sync.
type syncStats struct {
	Full             bool
	Rules            int // rules in the whole ruleset
	Chains           int // chains in the whole ruleset
	Written, Deleted int // chains rewritten / deleted by this sync
	RulesWritten     int
	Took             time.Duration
}

func newSyncer(log *zap.Logger, be backend, gen *generator, ct conntracker) *syncer {
	return &syncer{log: log, be: be, gen: gen, ct: ct, udp: map[string]udpPort{}}
}

// sync programs ports. A full sync (or the first, or one after a failure)
// reads the owned chains from the kernel, rewrites all of them, deletes the
// stale ones and puts back missing jumps.
func (s *syncer) sync(ports []*servicePort, full bool) (syncStats, error) {
	start := time.Now()
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
	p := makePlan(want, have)
	if !p.noChange {
		if err := s.be.Restore(p.input); err != nil {
			s.have = nil
			return syncStats{Full: full}, err
		}
	}
	s.have = fixedOnly(p.next, s.gen.n)
	s.frags, s.ports = frags, nextPorts
	s.flushStaleUDP(ports)
	st := syncStats{Full: full, Written: p.written, Deleted: p.deleted, RulesWritten: p.rules, Took: time.Since(start)}
	for table, chains := range s.have {
		st.Chains += len(chains)
		for c := range chains {
			st.Rules += len(want[table][c])
		}
	}
	for _, f := range frags {
		st.Chains += len(f.chains)
		for _, lines := range f.chains {
			st.Rules += len(lines)
		}
	}
	return st, nil
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
		if old, ok := s.ports[k]; ok && samePort(old, sp) {
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
	}
	missing := missingJumps(s.gen.n, present)
	if len(missing) == 0 {
		return a, nil
	}
	create := ruleset{tableNAT: {}, tableFilter: {}}
	for table, fixed := range map[string][]string{tableNAT: s.gen.n.fixedNAT(), tableFilter: s.gen.n.fixedFilter()} {
		for _, c := range fixed {
			if _, ok := a[table][c]; !ok {
				create.ensure(table, c)
			}
		}
	}
	if p := makePlan(create, applied{}); !p.noChange {
		if err := s.be.Restore(p.input); err != nil {
			return nil, fmt.Errorf("creating the proxy's chains: %w", err)
		}
		for table, chains := range create {
			for c := range chains {
				a[table][c] = ""
			}
		}
	}
	if err := ensureJumps(s.be, missing); err != nil {
		return nil, err
	}
	s.log.Info("installed jumps to the service chains", zap.Int("jumps", len(missing)))
	return a, nil
}
