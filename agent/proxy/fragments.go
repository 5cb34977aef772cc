package proxy

import (
	"slices"
	"sort"
)

// fragment is one service port's share of the ruleset: its own nat chains
// (SVC, SVL, EXT, FW, SEP) and its lines in the fixed chains (SERVICES,
// NODEPORTS, the filter chains). Fragments of unchanged ports are reused
// from sync to sync, so a sync costs in proportion to what changed.
type fragment struct {
	chains  map[string][]string            // per-service nat chains
	entries map[string]map[string][]string // table -> fixed chain -> lines
	rules   int
	large   bool // rendered in large cluster mode
}

func portKey(sp *servicePort) string { return sp.name + "/" + sp.proto }

// fragment renders one service port.
func (g *generator) fragment(sp *servicePort) *fragment {
	r := ruleset{tableNAT: {}, tableFilter: {}}
	g.servicePort(r, sp)
	f := &fragment{chains: map[string][]string{}, entries: map[string]map[string][]string{tableNAT: {}, tableFilter: {}},
		large: g.large}
	fixedNAT := g.n.fixedNAT()
	for table, chains := range r {
		for c, lines := range chains {
			f.rules += len(lines)
			if table == tableNAT && !slices.Contains(fixedNAT, c) {
				f.chains[c] = lines
			} else if len(lines) > 0 {
				f.entries[table][c] = lines
			}
		}
	}
	return f
}

// assemble builds the fixed chains from the fragments (sorted by key, so
// the output is stable) and, when withChains, adds every per-service chain.
func (g *generator) assemble(frags map[string]*fragment, withChains bool) ruleset {
	r := ruleset{tableNAT: {}, tableFilter: {}}
	for _, c := range g.n.fixedNAT() {
		r.ensure(tableNAT, c)
	}
	for _, c := range g.n.fixedFilter() {
		r.ensure(tableFilter, c)
	}
	g.fixedRules(r)
	keys := make([]string, 0, len(frags))
	for k := range frags {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		f := frags[k]
		for table, chains := range f.entries {
			for c, lines := range chains {
				r[table][c] = append(r[table][c], lines...)
			}
		}
		if withChains {
			for c, lines := range f.chains {
				r[tableNAT][c] = lines
			}
		}
	}
	r.add(tableNAT, g.n.Services, comment("orch service nodeports; NOTE: this must be the last rule in this chain"),
		"-m addrtype --dst-type LOCAL", "-j", g.n.NodePorts)
	return r
}

// samePort reports whether two renderings of a service port would be equal.
func samePort(a, b *servicePort) bool {
	return a.name == b.name && a.proto == b.proto && a.clusterIP == b.clusterIP && a.port == b.port &&
		a.nodePort == b.nodePort && a.affinity == b.affinity && a.extLocal == b.extLocal && a.intLocal == b.intLocal &&
		slices.Equal(a.externalIP, b.externalIP) && slices.Equal(a.lbIPs, b.lbIPs) &&
		slices.Equal(a.lbSources, b.lbSources) && slices.Equal(a.endpoints, b.endpoints)
}
