package proxy

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

const (
	tableNAT    = "nat"
	tableFilter = "filter"
)

// ruleset is a whole rendering: per table, each owned chain's rule lines
// ("-A chain ..."), in order.
type ruleset map[string]map[string][]string

func (r ruleset) add(table, chain string, parts ...string) {
	r[table][chain] = append(r[table][chain], "-A "+chain+" "+strings.Join(parts, " "))
}

// ensure declares chain (possibly without rules).
func (r ruleset) ensure(table, chain string) {
	if _, ok := r[table][chain]; !ok {
		r[table][chain] = []string{}
	}
}

// chains lists a table's chains, sorted.
func (r ruleset) chains(table string) []string {
	out := make([]string, 0, len(r[table]))
	for c := range r[table] {
		out = append(out, c)
	}
	sort.Strings(out)
	return out
}

// count is the number of rules in the set.
func (r ruleset) count() int {
	n := 0
	for _, t := range r {
		for _, lines := range t {
			n += len(lines)
		}
	}
	return n
}

// comment renders a -m comment match, quoted when it holds a space.
func comment(s string) string {
	if strings.ContainsAny(s, " \t") {
		s = `"` + s + `"`
	}
	return "-m comment --comment " + s
}

// probability is kube-proxy's computeProbability.
func probability(n int) string { return fmt.Sprintf("%0.10f", 1.0/float64(n)) }

// generator renders rules for one configuration.
type generator struct {
	n           chainNames
	clusterCIDR string
	mark        string // "0x4000"
	randomFully bool
	// large is kube-proxy's largeClusterMode: above largeClusterEndpoints
	// endpoints, the per-endpoint rules (endpoint jumps and SEP chains)
	// carry no comment, making the ruleset much smaller (about 40% at
	// 1,000 services x 10) and faster to load.
	large bool
}

// largeClusterEndpoints is kube-proxy's largeClusterEndpointsThreshold.
const largeClusterEndpoints = 1000

// endpointComment is the comment of a per-endpoint rule: none in large
// cluster mode (kube-proxy's appendServiceCommentLocked).
func (g *generator) endpointComment(s string) []string {
	if g.large {
		return nil
	}
	return []string{comment(s)}
}

func newGenerator(cfg Config, randomFully bool) *generator {
	return &generator{n: newChainNames(cfg.Prefix), clusterCIDR: cfg.ClusterCIDR,
		mark: fmt.Sprintf("%#x", cfg.MasqMark), randomFully: randomFully}
}

// render builds the whole ruleset for the service ports.
func (g *generator) render(ports []*servicePort) ruleset {
	frags := make(map[string]*fragment, len(ports))
	for _, sp := range ports {
		frags[portKey(sp)] = g.fragment(sp)
	}
	return g.assemble(frags, true)
}

func (g *generator) fixedRules(r ruleset) {
	n, m := g.n, g.mark
	r.add(tableNAT, n.MarkMasq, "-j MARK --or-mark", m)
	r.add(tableNAT, n.Post, "-m mark ! --mark", m+"/"+m, "-j RETURN")
	r.add(tableNAT, n.Post, "-j MARK --xor-mark", m)
	masq := []string{comment("orch service traffic requiring SNAT"), "-j MASQUERADE"}
	if g.randomFully {
		masq = append(masq, "--random-fully")
	}
	r.add(tableNAT, n.Post, masq...)
	r.add(tableFilter, n.Forward, comment("orch forwarding rules"), "-m mark --mark", m+"/"+m, "-j ACCEPT")
	r.add(tableFilter, n.Forward, comment("orch forwarding conntrack rule"),
		"-m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT")
	// Localhost NodePorts turn route_localnet on: as kube-proxy, drop
	// martian packets to 127.0.0.0/8 that were not DNATed.
	r.add(tableFilter, n.Firewall, "-d 127.0.0.0/8", "! -s 127.0.0.0/8", comment("block incoming localnet connections"),
		"-m conntrack ! --ctstate RELATED,ESTABLISHED,DNAT -j DROP")
}

// match is "-m proto -p proto [-d ip] --dport port".
func match(proto, ip string, port int32) string {
	s := "-m " + proto + " -p " + proto
	if ip != "" {
		s += " -d " + ip
	}
	return s + " --dport " + strconv.Itoa(int(port))
}
