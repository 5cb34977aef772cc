package proxy

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"go.uber.org/zap"
)

// jumps are the rules in built-in chains that lead to the proxy's chains,
// in the order they should appear (each is inserted first, so they are
// ensured in reverse).
func (n chainNames) jumps() []jump {
	newConn := []string{"-m", "conntrack", "--ctstate", "NEW"}
	j := func(table, from, target, comment string, extra ...string) jump {
		r := append(append([]string{}, extra...), "-m", "comment", "--comment", comment, "-j", target)
		return jump{table: table, from: from, rule: r}
	}
	return []jump{
		j(tableNAT, "PREROUTING", n.Services, "orch service portals"),
		j(tableNAT, "OUTPUT", n.Services, "orch service portals"),
		j(tableNAT, "POSTROUTING", n.Post, "orch postrouting rules"),
		j(tableFilter, "INPUT", n.Firewall, "orch proxy firewall"),
		j(tableFilter, "INPUT", n.External, "orch externally-visible service portals", newConn...),
		j(tableFilter, "FORWARD", n.Forward, "orch forwarding rules"),
		j(tableFilter, "FORWARD", n.Firewall, "orch proxy firewall", newConn...),
		j(tableFilter, "FORWARD", n.Services, "orch service portals", newConn...),
		j(tableFilter, "FORWARD", n.External, "orch externally-visible service portals", newConn...),
		j(tableFilter, "OUTPUT", n.Firewall, "orch proxy firewall", newConn...),
		j(tableFilter, "OUTPUT", n.Services, "orch service portals", newConn...),
	}
}

// line is the jump as iptables-save prints it.
func (j jump) line() string {
	parts := make([]string, len(j.rule))
	for i, p := range j.rule {
		if strings.ContainsAny(p, " \t") {
			p = `"` + p + `"`
		}
		parts[i] = p
	}
	return "-A " + j.from + " " + strings.Join(parts, " ")
}

// missingJumps are the jumps not in the saved built-in chains (present
// maps table -> saved lines).
func missingJumps(n chainNames, present map[string]map[string]bool) []jump {
	var out []jump
	for _, j := range n.jumps() {
		if !present[j.table][j.line()] {
			out = append(out, j)
		}
	}
	return out
}

// installJumps puts the missing jumps back, creating the fixed chains
// they lead to that a (the owned chains found) lacks. Jumps whose built-in
// chain has no rule leading to their target (a fresh node) are inserted
// by one restore that also creates the chains; the others (a rule leads
// there but does not read as expected) are left to go-iptables, whose
// check compares rules as iptables does, so no copy is ever added.
func (s *syncer) installJumps(a applied, missing []jump, present map[string]map[string]bool) error {
	create := ruleset{tableNAT: {}, tableFilter: {}}
	for table, fixed := range map[string][]string{tableNAT: s.gen.n.fixedNAT(), tableFilter: s.gen.n.fixedFilter()} {
		for _, c := range fixed {
			if _, ok := a[table][c]; !ok {
				create.ensure(table, c)
			}
		}
	}
	absent, check := splitJumps(missing, present)
	if in := jumpInput(create, absent); len(in) > 0 {
		if err := s.be.Restore(in); err != nil {
			return fmt.Errorf("creating the proxy's chains and jumps: %w", err)
		}
		for table, chains := range create {
			for c := range chains {
				a[table][c] = ""
			}
		}
	}
	if err := ensureJumps(s.be, check); err != nil {
		return err
	}
	s.log.Info("installed jumps to the service chains", zap.Int("jumps", len(missing)), zap.Int("checked", len(check)))
	return nil
}

// splitJumps sorts missing jumps into those whose built-in chain has no
// rule jumping to their target and the others.
func splitJumps(missing []jump, present map[string]map[string]bool) (absent, check []jump) {
	for _, j := range missing {
		prefix, suffix := "-A "+j.from+" ", " -j "+j.rule[len(j.rule)-1]
		found := false
		for l := range present[j.table] {
			if strings.HasPrefix(l, prefix) && strings.HasSuffix(l, suffix) {
				found = true
				break
			}
		}
		if found {
			check = append(check, j)
		} else {
			absent = append(absent, j)
		}
	}
	return absent, check
}

// jumpInput is the restore input declaring the chains of create and
// inserting the jumps (each first in its chain, so in reverse order), one
// transaction per table; nil when there is nothing to do.
func jumpInput(create ruleset, js []jump) []byte {
	var b strings.Builder
	for _, table := range tableOrder {
		var lines []string
		for _, c := range create.chains(table) {
			lines = append(lines, ":"+c+" - [0:0]")
		}
		for i := len(js) - 1; i >= 0; i-- {
			if j := js[i]; j.table == table {
				lines = append(lines, "-I "+j.from+" 1"+strings.TrimPrefix(j.line(), "-A "+j.from))
			}
		}
		if len(lines) > 0 {
			b.WriteString("*" + table + "\n" + strings.Join(lines, "\n") + "\nCOMMIT\n")
		}
	}
	if b.Len() == 0 {
		return nil
	}
	return []byte(b.String())
}

// ensureJumps inserts the given jumps (each first in its chain, so in
// reverse order) unless go-iptables finds them there already.
func ensureJumps(be backend, js []jump) error {
	js = slices.Clone(js)
	slices.Reverse(js)
	for _, j := range js {
		if err := be.EnsureJump(j); err != nil {
			return err
		}
	}
	return nil
}

// cleanup removes the proxy's jumps and every chain it owns under the
// prefix (the pod network's chains under the same prefix stay). Missing
// ones are success.
func cleanup(be backend, n chainNames) error {
	var errs []error
	for _, j := range n.jumps() {
		if err := be.DeleteJump(j); err != nil {
			errs = append(errs, err)
		}
	}
	for _, table := range tableOrder {
		out, err := be.Save(table)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		var owned []string
		for _, c := range parseSave(out).chains {
			if n.owned(table, c) {
				owned = append(owned, c)
			}
		}
		// One restore flushes them all first, so references among them
		// do not block the deletions.
		if len(owned) > 0 {
			if err := be.Restore(deleteInput(table, owned)); err != nil {
				errs = append(errs, fmt.Errorf("deleting %s chains: %w", table, err))
			}
		}
	}
	return errors.Join(errs...)
}

func deleteInput(table string, chains []string) []byte {
	var b strings.Builder
	b.WriteString("*" + table + "\n")
	for _, c := range chains {
		b.WriteString(":" + c + " - [0:0]\n")
	}
	for _, c := range chains {
		b.WriteString("-X " + c + "\n")
	}
	b.WriteString("COMMIT\n")
	return []byte(b.String())
}
