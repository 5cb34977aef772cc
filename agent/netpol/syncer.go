package netpol

import (
	"errors"
	"fmt"

	"go.uber.org/zap"
)

// syncer applies rulesets to the kernel, remembering the last one.
type syncer struct {
	log    *zap.Logger
	be     backend
	n      chainNames
	last   string // text of the last applied ruleset; "" = none
	isol   bool   // the last applied ruleset isolates some pod
	synced bool
}

// apply writes rs unless it is what was applied last (force rewrites
// anyway), then makes sure FORWARD jumps to it.
func (s *syncer) apply(rs ruleset, force bool) error {
	text := rs.text()
	if force || !s.synced || text != s.last {
		have, err := s.be.Chains()
		if err != nil {
			return err
		}
		var stale []string
		for _, c := range have {
			if s.n.owned(c) {
				if _, ok := rs.rules[c]; !ok {
					stale = append(stale, c)
				}
			}
		}
		if err := s.be.Restore(rs.restoreInput(stale)); err != nil {
			s.synced = false
			return fmt.Errorf("network policy rules: %w", err)
		}
		s.log.Debug("network policy rules written", zap.Int("chains", len(rs.chains)), zap.Int("deleted", len(stale)))
		s.last, s.isol, s.synced = text, rs.isolates(), true
	}
	_, err := ensureJump(s.be, s.n)
	return err
}

// checkJump re-checks the FORWARD jump; errNeedResync means it was gone.
func (s *syncer) checkJump() error {
	if !s.synced {
		return nil
	}
	present, err := ensureJump(s.be, s.n)
	if err != nil {
		return err
	}
	if !present {
		s.synced = false
		return errNeedResync
	}
	return nil
}

var errNeedResync = errors.New("network policy jump was missing")

// cleanup removes the jump and every chain this package owns; missing
// ones are success.
func cleanup(be backend, n chainNames) error {
	lines, err := be.Rules("FORWARD")
	if err != nil {
		return err
	}
	if err := deleteJumps(be, n, readJump(lines, n).copies); err != nil {
		return err
	}
	have, err := be.Chains()
	if err != nil {
		return err
	}
	var owned []string
	for _, c := range have {
		if n.owned(c) {
			owned = append(owned, c)
		}
	}
	if len(owned) == 0 {
		return nil
	}
	empty := ruleset{rules: map[string][]string{}}
	if err := be.Restore(empty.restoreInput(owned)); err != nil {
		return fmt.Errorf("deleting network policy chains: %w", err)
	}
	return nil
}
