package network

import (
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"

	"go.uber.org/zap"
)

// PortMapping is one container port published on the node (ports[].hostPort),
// as the CNI portmap plugin takes it.
type PortMapping struct {
	HostIP        string // empty or 0.0.0.0: every local address
	HostPort      int32
	ContainerPort int32
	Protocol      string // tcp, udp or sctp (lower case); empty is tcp
}

func (p PortMapping) proto() string {
	if p.Protocol == "" {
		return "tcp"
	}
	return strings.ToLower(p.Protocol)
}

func (p PortMapping) validate() error {
	switch p.proto() {
	case "tcp", "udp", "sctp":
	default:
		return fmt.Errorf("hostPort %d: protocol %q is not tcp, udp or sctp", p.HostPort, p.Protocol)
	}
	if p.HostPort < 1 || p.HostPort > 65535 || p.ContainerPort < 1 || p.ContainerPort > 65535 {
		return fmt.Errorf("hostPort %d -> containerPort %d: ports must be 1-65535", p.HostPort, p.ContainerPort)
	}
	if p.HostIP != "" {
		if ip := net.ParseIP(p.HostIP); ip == nil || ip.To4() == nil {
			return fmt.Errorf("hostPort %d: hostIP %q is not an IPv4 address", p.HostPort, p.HostIP)
		}
	}
	return nil
}

// Comments of the rules that hook orch's host-port chains into the built-in
// chains; Cleanup finds them by these.
const (
	commentHostPorts = "orch: pod hostPorts"
	commentHPMasq    = "orch: pod hostPort masquerade"
	commentLocalnet  = "orch: no localnet traffic from pods (route_localnet is on for hostPorts)"
)

// hostPortChains names orch's host-port chains (all in nat): DNAT is jumped
// to from PREROUTING and OUTPUT for local destinations, Masq from
// POSTROUTING; each pod with host ports has a DNAT chain and a masquerade
// chain of its own, jumped to from those.
type hostPortChains struct{ DNAT, Masq, podPrefix string }

func (m *Manager) hpChains() hostPortChains {
	p := m.cfg.HostPortPrefix
	return hostPortChains{DNAT: p + "HOSTPORTS", Masq: p + "HOSTPORTS-MASQ", podPrefix: p + "H"}
}

func (c hostPortChains) pod(podID string) (dnat, masq string) {
	h := idHash(podID)[:10]
	return c.podPrefix + "P-" + h, c.podPrefix + "M-" + h
}

// builtinHooks are the rules orch adds to built-in chains for host ports.
func (m *Manager) builtinHooks() []struct {
	table, chain string
	r            rule
} {
	c := m.hpChains()
	local := rule{"-m", "addrtype", "--dst-type", "LOCAL", "-m", "comment", "--comment", commentHostPorts, "-j", c.DNAT}
	return []struct {
		table, chain string
		r            rule
	}{
		{"nat", "PREROUTING", local},
		{"nat", "OUTPUT", local},
		{"nat", "POSTROUTING", jumpRule(c.Masq, commentHPMasq)},
		// As kube-proxy's guard for CVE-2020-8558: replies (ESTABLISHED)
		// to 127.0.0.1 clients come back this way and must pass.
		{"filter", "INPUT", rule{"-i", m.cfg.BridgeName, "-d", "127.0.0.0/8", "-m", "conntrack", "!", "--ctstate",
			"RELATED,ESTABLISHED,DNAT", "-m", "comment", "--comment", commentLocalnet, "-j", "DROP"}},
	}
}

// EnsureHostPortChains creates the shared host-port chains and their jumps
// (first in PREROUTING, OUTPUT, POSTROUTING) and the INPUT rule that drops
// packets from pods to 127.0.0.0/8 (route_localnet is turned on for the
// bridge, as the portmap plugin does, so 127.0.0.1:hostPort works). Rules
// of the chains are left alone: they are the pods' jumps. Idempotent.
func (m *Manager) EnsureHostPortChains() error {
	c := m.hpChains()
	for _, chain := range []string{c.DNAT, c.Masq} {
		ok, err := m.ipt.ChainExists("nat", chain)
		if err != nil {
			return fmt.Errorf("iptables nat/%s: %w", chain, err)
		}
		if !ok {
			if err := m.ipt.NewChain("nat", chain); err != nil {
				return fmt.Errorf("iptables create nat/%s: %w", chain, err)
			}
		}
	}
	for _, h := range m.builtinHooks() {
		if err := m.ensureFirst(h.table, h.chain, h.r); err != nil {
			return err
		}
	}
	return setSysctl(m.log, fmt.Sprintf("/proc/sys/net/ipv4/conf/%s/route_localnet", m.cfg.BridgeName), "1")
}

// ensureFirst inserts r first in table/chain unless it is there already.
func (m *Manager) ensureFirst(table, chain string, r rule) error {
	ok, err := m.ipt.Exists(table, chain, r...)
	if err != nil {
		return fmt.Errorf("iptables check %s/%s: %w", table, chain, err)
	}
	if ok {
		return nil
	}
	if err := m.ipt.Insert(table, chain, 1, r...); err != nil {
		return fmt.Errorf("iptables insert into %s/%s: %w", table, chain, err)
	}
	return nil
}

// hostPortRules are a pod's DNAT rules (hostIP:hostPort -> podIP:port) and
// masquerade rules (hairpin: the pod reaching itself through its host port;
// locally originated 127.0.0.0/8 traffic).
func hostPortRules(pod PodNet, podIP net.IP, ports []PortMapping) (dnat, masq []rule) {
	ip := podIP.String()
	for _, p := range ports {
		hp, cp, proto := strconv.Itoa(int(p.HostPort)), strconv.Itoa(int(p.ContainerPort)), p.proto()
		comment := fmt.Sprintf("%s/%s hostPort %s/%s", pod.Namespace, pod.Name, hp, proto)
		d := rule{"-p", proto, "-m", proto, "--dport", hp}
		if p.HostIP != "" && !net.ParseIP(p.HostIP).IsUnspecified() {
			d = append(rule{"-d", p.HostIP + "/32"}, d...)
		}
		dnat = append(dnat, append(d, "-m", "comment", "--comment", comment, "-j", "DNAT", "--to-destination", net.JoinHostPort(ip, cp)))
		for _, src := range []string{ip + "/32", "127.0.0.0/8"} {
			masq = append(masq, rule{"-s", src, "-d", ip + "/32", "-p", proto, "-m", proto, "--dport", cp,
				"-m", "comment", "--comment", comment, "-j", "MASQUERADE"})
		}
	}
	return dnat, masq
}

// setupHostPorts programs the pod's host ports; on failure what it made is
// removed again. Calling it again with the same ports changes nothing.
func (m *Manager) setupHostPorts(pod PodNet, podIP net.IP) (err error) {
	if len(pod.Ports) == 0 {
		return nil
	}
	for _, p := range pod.Ports {
		if err := p.validate(); err != nil {
			return err
		}
	}
	m.hpMu.Lock()
	defer m.hpMu.Unlock()
	defer func() {
		if err != nil {
			_ = m.teardownHostPortsLocked(pod.ID)
		}
	}()
	if err := m.EnsureHostPortChains(); err != nil {
		return err
	}
	c := m.hpChains()
	dnatChain, masqChain := c.pod(pod.ID)
	dnat, masq := hostPortRules(pod, podIP, pod.Ports)
	sig := fmt.Sprint(dnat, masq)
	if m.hpDone[pod.ID] == sig {
		return nil // programmed by an earlier sync of the pod
	}
	jumpComment := fmt.Sprintf("%s/%s hostPorts", pod.Namespace, pod.Name)
	for _, s := range []struct{ parent, chain string }{{c.DNAT, dnatChain}, {c.Masq, masqChain}} {
		rules := dnat
		if s.chain == masqChain {
			rules = masq
		}
		if err := m.ensureChain("nat", s.chain, rules); err != nil {
			return err
		}
		r := jumpRule(s.chain, jumpComment)
		if ok, err := m.ipt.Exists("nat", s.parent, r...); err != nil || !ok {
			if err := m.ipt.Append("nat", s.parent, r...); err != nil {
				return fmt.Errorf("iptables jump %s -> %s: %w", s.parent, s.chain, err)
			}
		}
	}
	if m.hpDone == nil {
		m.hpDone = map[string]string{}
	}
	m.hpDone[pod.ID] = sig
	m.log.Debug("pod host ports programmed", zap.String("pod", pod.Namespace+"/"+pod.Name), zap.Int("ports", len(pod.Ports)))
	return m.step("hostports")
}

// teardownHostPorts removes the pod's host-port chains and the jumps to
// them; a pod without any is success.
func (m *Manager) teardownHostPorts(podID string) error {
	m.hpMu.Lock()
	defer m.hpMu.Unlock()
	return m.teardownHostPortsLocked(podID)
}

func (m *Manager) teardownHostPortsLocked(podID string) error {
	delete(m.hpDone, podID)
	c := m.hpChains()
	dnatChain, masqChain := c.pod(podID)
	for _, s := range []struct{ parent, chain string }{{c.DNAT, dnatChain}, {c.Masq, masqChain}} {
		if err := m.deleteChainAndJumps("nat", s.parent, s.chain); err != nil {
			return err
		}
	}
	return nil
}

// deleteChainAndJumps deletes every rule of parent that jumps to chain,
// then chain itself. A missing chain is success: no rule can jump to it.
func (m *Manager) deleteChainAndJumps(table, parent, chain string) error {
	ok, err := m.ipt.ChainExists(table, chain)
	if err != nil {
		return fmt.Errorf("iptables %s/%s: %w", table, chain, err)
	}
	if !ok {
		return nil
	}
	if ok, err := m.ipt.ChainExists(table, parent); err != nil {
		return fmt.Errorf("iptables %s/%s: %w", table, parent, err)
	} else if ok {
		rules, err := m.ipt.List(table, parent)
		if err != nil {
			return fmt.Errorf("iptables list %s/%s: %w", table, parent, err)
		}
		// rules[0] is "-N parent"; rule i (1-based) is rules[i]. Delete from
		// the end so the numbers of the rest stay valid.
		for i := len(rules) - 1; i >= 1; i-- {
			if strings.HasSuffix(rules[i], " -j "+chain) {
				if err := m.ipt.DeleteById(table, parent, i); err != nil {
					return fmt.Errorf("iptables delete jump %s -> %s: %w", parent, chain, err)
				}
			}
		}
	}
	if err := m.ipt.ClearAndDeleteChain(table, chain); err != nil {
		return fmt.Errorf("iptables delete %s/%s: %w", table, chain, err)
	}
	return nil
}

// cleanupHostPorts removes every host-port chain orch made (the shared
// ones, every pod's) and the rules hooking them into built-in chains.
func (m *Manager) cleanupHostPorts() error {
	m.hpMu.Lock()
	defer m.hpMu.Unlock()
	clear(m.hpDone)
	c := m.hpChains()
	chains, err := m.ipt.ListChains("nat")
	if err != nil {
		return fmt.Errorf("iptables list nat chains: %w", err)
	}
	for _, h := range m.builtinHooks() {
		// A rule naming a missing chain cannot exist (and iptables -C fails).
		if target := h.r[len(h.r)-1]; target != "DROP" && !slices.Contains(chains, target) {
			continue
		}
		if err := m.deleteJumps(h.table, h.chain, h.r); err != nil {
			return err
		}
	}
	for _, ch := range chains { // the shared chains first: they jump to the pods'
		if ch == c.DNAT || ch == c.Masq {
			if err := m.ipt.ClearAndDeleteChain("nat", ch); err != nil {
				return fmt.Errorf("iptables delete nat/%s: %w", ch, err)
			}
		}
	}
	for _, ch := range chains {
		if strings.HasPrefix(ch, c.podPrefix+"P-") || strings.HasPrefix(ch, c.podPrefix+"M-") {
			if err := m.ipt.ClearAndDeleteChain("nat", ch); err != nil {
				return fmt.Errorf("iptables delete nat/%s: %w", ch, err)
			}
		}
	}
	return nil
}
