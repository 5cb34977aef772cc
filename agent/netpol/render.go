package netpol

import (
	"bytes"
	"net/netip"
	"slices"
	"strings"
)

// ruleset is the filter table content this package wants: its chains in
// order (Main first) and each chain's rules as iptables-restore lines.
type ruleset struct {
	chains []string
	rules  map[string][]string
}

// declare adds chain (empty) unless it is there.
func (r *ruleset) declare(chain string) {
	if _, ok := r.rules[chain]; !ok {
		r.chains = append(r.chains, chain)
		r.rules[chain] = []string{}
	}
}

func (r *ruleset) add(chain string, parts ...string) {
	r.declare(chain)
	r.rules[chain] = append(r.rules[chain], "-A "+chain+" "+strings.Join(parts, " "))
}

func comment(s string) string {
	return `-m comment --comment "` + strings.ReplaceAll(s, `"`, "'") + `"`
}

// render turns the local pods' rules into the ruleset.
func render(n chainNames, pods []podRules) ruleset {
	r := ruleset{rules: map[string][]string{}}
	r.add(n.Main, "-m conntrack --ctstate RELATED,ESTABLISHED", comment("orch netpol: replies of allowed connections"), "-j RETURN")
	for _, egress := range []bool{true, false} {
		for _, pr := range pods {
			if egress && pr.OutIsolated || !egress && pr.InIsolated {
				renderJumps(&r, n, pr, egress)
			}
		}
	}
	for _, pr := range pods {
		if pr.OutIsolated {
			renderPodChain(&r, n.podChain(true, pr.Pod.key()), pr.Pod.key(), pr.Egress, true)
		}
		if pr.InIsolated {
			renderPodChain(&r, n.podChain(false, pr.Pod.key()), pr.Pod.key(), pr.Ingress, false)
		}
	}
	return r
}

func renderJumps(r *ruleset, n chainNames, pr podRules, egress bool) {
	dir, flag := "ingress", "-d"
	if egress {
		dir, flag = "egress", "-s"
	}
	for _, ip := range pr.Pod.IPs {
		r.add(n.Main, flag, netip.PrefixFrom(ip, 32).String(), comment(pr.Pod.key()+" "+dir), "-j", n.podChain(egress, pr.Pod.key()))
	}
}

// renderPodChain: one RETURN per allow, then DROP.
func renderPodChain(r *ruleset, chain, pod string, allows []allow, egress bool) {
	r.declare(chain)
	for _, a := range allows {
		var parts []string
		if a.Peer != "" {
			if egress {
				parts = append(parts, "-d", a.Peer)
			} else {
				parts = append(parts, "-s", a.Peer)
			}
		}
		if a.Proto != "" {
			parts = append(parts, "-p", a.Proto, "-m", a.Proto)
			if a.Ports != "" {
				parts = append(parts, "--dport", a.Ports)
			}
		}
		parts = append(parts, comment(a.Policy), "-j RETURN")
		r.add(chain, parts...)
	}
	dir := "ingress"
	if egress {
		dir = "egress"
	}
	r.add(chain, comment(pod+": not allowed by its "+dir+" policies"), "-j DROP")
}

// text is the ruleset's rules, for change detection.
func (r ruleset) text() string {
	var b strings.Builder
	for _, c := range r.chains {
		b.WriteString(":" + c + "\n")
		for _, l := range r.rules[c] {
			b.WriteString(l + "\n")
		}
	}
	return b.String()
}

// isolates reports whether any pod chain is wanted.
func (r ruleset) isolates() bool { return len(r.chains) > 1 }

// restoreInput is the iptables-restore --noflush input that writes every
// wanted chain (declaring a chain flushes it) and deletes stale ones.
func (r ruleset) restoreInput(stale []string) []byte {
	var b bytes.Buffer
	b.WriteString("*filter\n")
	for _, c := range r.chains {
		b.WriteString(":" + c + " - [0:0]\n")
	}
	stale = slices.Sorted(slices.Values(stale))
	for _, c := range stale {
		b.WriteString(":" + c + " - [0:0]\n")
	}
	for _, c := range r.chains {
		for _, l := range r.rules[c] {
			b.WriteString(l + "\n")
		}
	}
	for _, c := range stale {
		b.WriteString("-X " + c + "\n")
	}
	b.WriteString("COMMIT\n")
	return b.Bytes()
}
