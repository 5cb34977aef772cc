package proxy

import "fmt"

// portPlan is what one service port needs, as kube-proxy's syncProxyRules
// decides it.
type portPlan struct {
	svc, svl, ext, fw        string // chain names
	cluster, local           []endpoint
	internalChain            string // where ClusterIP traffic goes
	externalPolicyChain      string // where EXT ends
	hasInternal, hasExternal bool
	hasEndpoints             bool
	usesCluster, usesLocal   bool
}

func (g *generator) plan(sp *servicePort) portPlan {
	n := g.n
	p := portPlan{svc: n.servicePortChain(kindSVC, sp.name, sp.proto), svl: n.servicePortChain(kindSVL, sp.name, sp.proto),
		ext: n.servicePortChain(kindEXT, sp.name, sp.proto), fw: n.servicePortChain(kindFW, sp.name, sp.proto)}
	p.cluster, p.local = categorize(sp)
	p.usesCluster = len(p.cluster) > 0
	p.usesLocal = len(p.local) > 0
	p.internalChain, p.hasInternal = p.svc, len(p.cluster) > 0
	if sp.intLocal {
		p.internalChain, p.hasInternal = p.svl, len(p.local) > 0
	}
	p.externalPolicyChain, p.hasExternal = p.svc, len(p.cluster) > 0
	if sp.extLocal {
		p.externalPolicyChain, p.hasExternal = p.svl, len(p.local) > 0
	}
	p.hasEndpoints = p.usesCluster || p.usesLocal
	return p
}

// servicePort writes one service port's rules.
func (g *generator) servicePort(r ruleset, sp *servicePort) {
	p := g.plan(sp)
	g.entryRules(r, sp, p)
	if p.usesCluster {
		r.ensure(tableNAT, p.svc)
		if g.clusterCIDR != "" {
			r.add(tableNAT, p.svc, comment(sp.name+" cluster IP"), match(sp.proto, sp.clusterIP, sp.port),
				"!", "-s", g.clusterCIDR, "-j", g.n.MarkMasq)
		}
		g.endpointJumps(r, sp, p.svc, p.cluster)
	}
	if p.usesLocal {
		r.ensure(tableNAT, p.svl)
		g.endpointJumps(r, sp, p.svl, p.local)
	}
	if p.hasEndpoints && sp.externallyReachable() {
		g.externalChain(r, sp, p)
	}
	if p.hasEndpoints && len(sp.lbSources) > 0 && len(sp.lbIPs) > 0 {
		g.firewallChain(r, sp, p)
	}
	g.endpointChains(r, sp, p)
}

// entryRules are the rules in SERVICES/NODEPORTS (nat) and the REJECT/DROP
// rules (filter) for the service port's addresses.
func (g *generator) entryRules(r ruleset, sp *servicePort, p portPlan) {
	n := g.n
	if p.hasInternal {
		r.add(tableNAT, n.Services, comment(sp.name+" cluster IP"), match(sp.proto, sp.clusterIP, sp.port), "-j", p.internalChain)
	} else {
		c, target := noEndpoints(sp.name, sp.intLocal && len(p.cluster) > 0)
		r.add(tableFilter, n.Services, comment(c), match(sp.proto, sp.clusterIP, sp.port), "-j", target)
	}
	extC, extTarget := noEndpoints(sp.name, sp.extLocal && len(p.cluster) > 0)
	for _, ip := range sp.externalIP {
		if p.hasEndpoints {
			r.add(tableNAT, n.Services, comment(sp.name+" external IP"), match(sp.proto, ip, sp.port), "-j", p.ext)
		}
		if !p.hasExternal {
			r.add(tableFilter, n.External, comment(extC), match(sp.proto, ip, sp.port), "-j", extTarget)
		}
	}
	lbChain := p.ext
	if len(sp.lbSources) > 0 {
		lbChain = p.fw
	}
	for _, ip := range sp.lbIPs {
		if p.hasEndpoints {
			r.add(tableNAT, n.Services, comment(sp.name+" loadbalancer IP"), match(sp.proto, ip, sp.port), "-j", lbChain)
		}
		if !p.hasExternal {
			r.add(tableFilter, n.External, comment(extC), match(sp.proto, ip, sp.port), "-j", extTarget)
		}
	}
	if sp.nodePort != 0 {
		if p.hasEndpoints {
			r.add(tableNAT, n.NodePorts, comment(sp.name), match(sp.proto, "", sp.nodePort), "-j", p.ext)
		}
		if !p.hasExternal {
			r.add(tableFilter, n.External, comment(extC), "-m addrtype --dst-type LOCAL", match(sp.proto, "", sp.nodePort), "-j", extTarget)
		}
	}
}

// noEndpoints is the filter rule's comment and target for a port without
// (local) endpoints: REJECT, or DROP when only local ones are missing.
func noEndpoints(name string, onlyLocalMissing bool) (string, string) {
	if onlyLocalMissing {
		return name + " has no local endpoints", "DROP"
	}
	return name + " has no endpoints", "REJECT --reject-with icmp-port-unreachable"
}

// externalChain is EXT-<hash>: masquerade (policy Cluster) or keep the
// source (policy Local, with pod and node traffic short-circuited to the
// cluster chain), then the policy chain.
func (g *generator) externalChain(r ruleset, sp *servicePort, p portPlan) {
	r.ensure(tableNAT, p.ext)
	if !sp.extLocal {
		r.add(tableNAT, p.ext, comment("masquerade traffic for "+sp.name+" external destinations"), "-j", g.n.MarkMasq)
	} else {
		if g.clusterCIDR != "" && p.usesCluster {
			r.add(tableNAT, p.ext, "-s", g.clusterCIDR, comment("pod traffic for "+sp.name+" external destinations"), "-j", p.svc)
		}
		r.add(tableNAT, p.ext, comment("masquerade LOCAL traffic for "+sp.name+" external destinations"),
			"-m addrtype --src-type LOCAL", "-j", g.n.MarkMasq)
		if p.usesCluster {
			r.add(tableNAT, p.ext, comment("route LOCAL traffic for "+sp.name+" external destinations"),
				"-m addrtype --src-type LOCAL", "-j", p.svc)
		}
	}
	if p.hasExternal {
		r.add(tableNAT, p.ext, "-j", p.externalPolicyChain)
	}
}

// firewallChain is FW-<hash> (loadBalancerSourceRanges): allowed sources go
// on to EXT; the rest is dropped in filter (still addressed to the LB IP,
// as it was not DNATed).
func (g *generator) firewallChain(r ruleset, sp *servicePort, p portPlan) {
	r.ensure(tableNAT, p.fw)
	for _, src := range sp.lbSources {
		r.add(tableNAT, p.fw, comment(sp.name+" loadbalancer IP"), "-s", src, "-j", p.ext)
	}
	// The node itself may use the LB IP.
	r.add(tableNAT, p.fw, comment(sp.name+" loadbalancer IP"), "-m addrtype --src-type LOCAL", "-j", p.ext)
	for _, ip := range sp.lbIPs {
		r.add(tableFilter, g.n.Firewall, comment(fmt.Sprintf("%s traffic not accepted by %s", sp.name, p.fw)),
			match(sp.proto, ip, sp.port), "-j DROP")
	}
}

// endpointJumps spreads chain's traffic over eps (affinity first).
func (g *generator) endpointJumps(r ruleset, sp *servicePort, chain string, eps []endpoint) {
	if sp.affinity > 0 {
		for _, e := range eps {
			sep := g.n.endpointChain(sp.name, sp.proto, e.String())
			r.add(tableNAT, chain, append(g.endpointComment(sp.name+" -> "+e.String()), "-m recent --name", sep,
				"--rcheck --seconds", fmt.Sprint(sp.affinity), "--reap -j", sep)...)
		}
	}
	for i, e := range eps {
		sep := g.n.endpointChain(sp.name, sp.proto, e.String())
		args := g.endpointComment(sp.name + " -> " + e.String())
		if i < len(eps)-1 {
			args = append(args, "-m statistic --mode random --probability", probability(len(eps)-i))
		}
		r.add(tableNAT, chain, append(args, "-j", sep)...)
	}
}

// endpointChains writes each used endpoint's SEP chain once.
func (g *generator) endpointChains(r ruleset, sp *servicePort, p portPlan) {
	for _, list := range [][]endpoint{p.cluster, p.local} {
		for _, e := range list {
			sep := g.n.endpointChain(sp.name, sp.proto, e.String())
			if _, done := r[tableNAT][sep]; done {
				continue
			}
			r.ensure(tableNAT, sep)
			r.add(tableNAT, sep, append(g.endpointComment(sp.name), "-s", e.ip, "-j", g.n.MarkMasq)...)
			dnat := g.endpointComment(sp.name)
			if sp.affinity > 0 {
				dnat = append(dnat, "-m recent --name", sep, "--set")
			}
			dnat = append(dnat, "-m", sp.proto, "-p", sp.proto, "-j DNAT --to-destination", e.String())
			r.add(tableNAT, sep, dnat...)
		}
	}
}
