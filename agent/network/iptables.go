package network

import (
	"bufio"
	"bytes"
	"fmt"
	"net"
	"os/exec"
	"strings"

	"go.uber.org/zap"
)

// rule is one iptables rule spec in a table/chain.
type rule []string

// DetectIPTables picks the iptables command whose backend the host uses,
// as Kubernetes' iptables-wrapper does: if only one of iptables-legacy and
// iptables-nft is installed, that one; else the one whose ruleset already
// holds ORCH- or KUBE- chains; else the one with more rules (legacy must
// have strictly more, so a fresh host gets nft). Without either variant it
// returns plain "iptables".
func DetectIPTables(log *zap.Logger) string {
	_, lerr := exec.LookPath("iptables-legacy-save")
	_, nerr := exec.LookPath("iptables-nft-save")
	switch {
	case lerr != nil && nerr != nil:
		return "iptables"
	case nerr != nil:
		return "iptables-legacy"
	case lerr != nil:
		return "iptables-nft"
	}
	legacy, nft := saveStats("iptables-legacy-save"), saveStats("iptables-nft-save")
	choice := "iptables-nft"
	switch {
	case legacy.ours && !nft.ours:
		choice = "iptables-legacy"
	case nft.ours && !legacy.ours:
	case legacy.rules > nft.rules:
		choice = "iptables-legacy"
	}
	log.Debug("iptables backend", zap.String("command", choice),
		zap.Int("legacyRules", legacy.rules), zap.Int("nftRules", nft.rules))
	return choice
}

type ruleStats struct {
	rules int
	ours  bool // has ORCH- or KUBE- chains
}

func saveStats(cmd string) ruleStats {
	out, err := exec.Command(cmd).Output()
	if err != nil {
		return ruleStats{}
	}
	var st ruleStats
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "-A "):
			st.rules++
		case strings.HasPrefix(line, ":ORCH-"), strings.HasPrefix(line, ":KUBE-"):
			st.ours = true
		}
	}
	return st
}

// EnsureMasquerade programs orch's chains: in nat, NATChain (jumped to
// from POSTROUTING) returns pod traffic to the cluster CIDR and masquerades
// the rest of the pod CIDR's traffic (multicast excepted); in filter,
// FilterChain (jumped to first from FORWARD) accepts traffic from and to the
// bridge. A chain whose rules differ from the wanted ones is rewritten.
func (m *Manager) EnsureMasquerade(clusterCIDR, podCIDR string) error {
	for _, c := range []string{clusterCIDR, podCIDR} {
		if _, _, err := net.ParseCIDR(c); err != nil {
			return fmt.Errorf("masquerade: bad CIDR %q: %w", c, err)
		}
	}
	masq := rule{"-s", podCIDR, "!", "-d", "224.0.0.0/4", "-m", "comment", "--comment",
		"orch: masquerade pod traffic leaving the cluster", "-j", "MASQUERADE"}
	if m.ipt.HasRandomFully() {
		masq = append(masq, "--random-fully")
	}
	nat := []rule{
		{"-s", podCIDR, "-d", clusterCIDR, "-m", "comment", "--comment",
			"orch: no masquerade inside the cluster", "-j", "RETURN"},
		masq,
	}
	br := m.cfg.BridgeName
	filter := []rule{
		{"-i", br, "-m", "comment", "--comment", "orch: forward traffic from pods", "-j", "ACCEPT"},
		{"-o", br, "-m", "comment", "--comment", "orch: forward traffic to pods", "-j", "ACCEPT"},
	}
	if err := m.ensureChain("nat", m.cfg.NATChain, nat); err != nil {
		return err
	}
	if err := m.ensureJump("nat", "POSTROUTING", m.cfg.NATChain, "orch: pod masquerade"); err != nil {
		return err
	}
	if err := m.ensureChain("filter", m.cfg.FilterChain, filter); err != nil {
		return err
	}
	return m.ensureJump("filter", "FORWARD", m.cfg.FilterChain, "orch: pod forwarding")
}

// ensureChain creates chain if needed and makes its rules exactly want.
func (m *Manager) ensureChain(table, chain string, want []rule) error {
	ok, err := m.ipt.ChainExists(table, chain)
	if err != nil {
		return fmt.Errorf("iptables %s/%s: %w", table, chain, err)
	}
	if !ok {
		if err := m.ipt.NewChain(table, chain); err != nil {
			return fmt.Errorf("iptables create %s/%s: %w", table, chain, err)
		}
	} else if m.chainMatches(table, chain, want) {
		return nil
	} else if err := m.ipt.ClearChain(table, chain); err != nil {
		return fmt.Errorf("iptables flush %s/%s: %w", table, chain, err)
	}
	for _, r := range want {
		if err := m.ipt.Append(table, chain, r...); err != nil {
			return fmt.Errorf("iptables append to %s/%s: %w", table, chain, err)
		}
	}
	m.log.Info("programmed iptables chain", zap.String("table", table), zap.String("chain", chain))
	return nil
}

func (m *Manager) chainMatches(table, chain string, want []rule) bool {
	have, err := m.ipt.List(table, chain) // "-N chain" then one line per rule
	if err != nil || len(have) != len(want)+1 {
		return false
	}
	for _, r := range want {
		if ok, err := m.ipt.Exists(table, chain, r...); err != nil || !ok {
			return false
		}
	}
	return true
}

func jumpRule(target, comment string) rule {
	return rule{"-m", "comment", "--comment", comment, "-j", target}
}

// ensureJump puts a jump to target first in the built-in chain.
func (m *Manager) ensureJump(table, from, target, comment string) error {
	r := jumpRule(target, comment)
	ok, err := m.ipt.Exists(table, from, r...)
	if err != nil {
		return fmt.Errorf("iptables check jump %s->%s: %w", from, target, err)
	}
	if ok {
		return nil
	}
	if err := m.ipt.Insert(table, from, 1, r...); err != nil {
		return fmt.Errorf("iptables insert jump %s->%s: %w", from, target, err)
	}
	return nil
}

// Cleanup removes orch's jumps and chains (uninstall, tests). Missing ones
// are success, so it is idempotent.
func (m *Manager) Cleanup() error {
	if err := m.cleanupHostPorts(); err != nil {
		return err
	}
	steps := []struct{ table, from, chain, comment string }{
		{"nat", "POSTROUTING", m.cfg.NATChain, "orch: pod masquerade"},
		{"filter", "FORWARD", m.cfg.FilterChain, "orch: pod forwarding"},
	}
	for _, s := range steps {
		ok, err := m.ipt.ChainExists(s.table, s.chain)
		if err != nil {
			return fmt.Errorf("iptables %s/%s: %w", s.table, s.chain, err)
		}
		if !ok { // no rule can jump to a chain that does not exist
			continue
		}
		if err := m.deleteJumps(s.table, s.from, jumpRule(s.chain, s.comment)); err != nil {
			return err
		}
		if err := m.ipt.ClearAndDeleteChain(s.table, s.chain); err != nil {
			return fmt.Errorf("iptables delete %s/%s: %w", s.table, s.chain, err)
		}
	}
	return nil
}

// deleteJumps deletes every copy of the jump rule r from chain from.
func (m *Manager) deleteJumps(table, from string, r rule) error {
	for {
		ok, err := m.ipt.Exists(table, from, r...)
		if err != nil {
			return fmt.Errorf("iptables check jump in %s: %w", from, err)
		}
		if !ok {
			return nil
		}
		if err := m.ipt.Delete(table, from, r...); err != nil {
			return fmt.Errorf("iptables delete jump in %s: %w", from, err)
		}
	}
}
