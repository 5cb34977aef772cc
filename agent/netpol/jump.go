package netpol

import (
	"fmt"
	"strings"
)

const jumpComment = "orch network policy"

// jumpRule is the FORWARD rule leading to the Main chain.
func (n chainNames) jumpRule() []string {
	return []string{"-m", "comment", "--comment", jumpComment, "-j", n.Main}
}

// jumpState is what FORWARD's rules say about the jump.
type jumpState struct {
	copies int  // rules jumping to Main
	early  bool // the first copy comes before every other jump to a prefix chain
}

// readJump inspects `iptables -S FORWARD` lines. Jumps to the pod
// network's and the proxy's chains (same prefix) accept traffic, so the
// jump must come before them; other chains' order is not ours to change.
func readJump(lines []string, n chainNames) jumpState {
	var st jumpState
	otherSeen := false
	for _, l := range lines {
		target, ok := jumpTarget(l)
		if !ok {
			continue
		}
		switch {
		case target == n.Main:
			if st.copies == 0 {
				st.early = !otherSeen
			}
			st.copies++
		case strings.HasPrefix(target, n.prefix):
			otherSeen = true
		}
	}
	return st
}

// jumpTarget is the -j/-g target of an `iptables -S` rule line.
func jumpTarget(line string) (string, bool) {
	f := strings.Fields(line)
	for i := 0; i+1 < len(f); i++ {
		if f[i] == "-j" || f[i] == "-g" {
			return f[i+1], true
		}
	}
	return "", false
}

// ensureJump makes FORWARD jump to Main exactly once, before the other
// prefix chains; present is false when no jump was there (the chains were
// probably flushed: the caller resyncs).
func ensureJump(be backend, n chainNames) (present bool, err error) {
	lines, err := be.Rules("FORWARD")
	if err != nil {
		return false, err
	}
	st := readJump(lines, n)
	if st.copies == 1 && st.early {
		return true, nil
	}
	if err := deleteJumps(be, n, st.copies); err != nil {
		return false, err
	}
	if err := be.Insert("FORWARD", 1, n.jumpRule()); err != nil {
		return false, fmt.Errorf("network policy jump: %w", err)
	}
	return st.copies > 0, nil
}

func deleteJumps(be backend, n chainNames, copies int) error {
	for range copies {
		if err := be.DeleteIfExists("FORWARD", n.jumpRule()); err != nil {
			return fmt.Errorf("network policy jump: %w", err)
		}
	}
	return nil
}
