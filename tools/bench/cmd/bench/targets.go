package main

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"go.uber.org/zap"

	"github.com/orch/orch/tools/bench/internal/report"
	"github.com/orch/orch/tools/bench/internal/servers"
)

// orchTarget is one setup to measure: a single server, or a cluster of
// servers with the clients spread over every API endpoint or all on the
// Raft leader. The baseline is orchTarget{name: "baseline"}.
type orchTarget struct {
	name       string
	servers    int
	leaderOnly bool
}

// parseOrchTarget parses "orch", "orch-haN" or "orch-haN-leader".
func parseOrchTarget(name string) (orchTarget, error) {
	if name == "orch" {
		return orchTarget{name: name, servers: 1}, nil
	}
	rest, ok := strings.CutPrefix(name, "orch-ha")
	if !ok {
		return orchTarget{}, fmt.Errorf("orch target %q: want orch, orch-haN or orch-haN-leader", name)
	}
	count, leaderOnly := strings.CutSuffix(rest, "-leader")
	n, err := strconv.Atoi(count)
	if err != nil || n < 2 || n > 9 || count != strconv.Itoa(n) {
		return orchTarget{}, fmt.Errorf("orch target %q: want orch-haN or orch-haN-leader with N from 2 to 9", name)
	}
	return orchTarget{name: name, servers: n, leaderOnly: leaderOnly}, nil
}

// parseOrchTargets parses a comma separated list; duplicates are an error
// (each target's scratch dir and report column is named after it).
func parseOrchTargets(list string) ([]orchTarget, error) {
	var out []orchTarget
	seen := map[string]bool{}
	for _, f := range strings.Split(list, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		t, err := parseOrchTarget(f)
		if err != nil {
			return nil, err
		}
		if seen[f] {
			return nil, fmt.Errorf("orch target %q given twice", f)
		}
		seen[f] = true
		out = append(out, t)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("--orch-targets %q names no target", list)
	}
	return out, nil
}

// setup describes a cluster target for the report ("" for one server).
func (t orchTarget) setup() string {
	switch {
	case t.servers < 2:
		return ""
	case t.leaderOnly:
		return fmt.Sprintf("%d servers, all clients on the Raft leader", t.servers)
	default:
		return fmt.Sprintf("%d servers, clients round-robin over all %d", t.servers, t.servers)
	}
}

// loadEndpoints returns the kubeconfigs the load goes to: every server's,
// or for a leader-only target the current Raft leader's (noted in the
// report, since the load then bypasses forwarding).
func loadEndpoints(ctx context.Context, log *zap.Logger, s *servers.Server, target orchTarget, t *report.Target) ([]string, error) {
	all := s.Kubeconfigs()
	if !target.leaderOnly {
		return all, nil
	}
	i, err := s.Leader(ctx)
	if err != nil {
		return nil, fmt.Errorf("find the Raft leader: %w", err)
	}
	log.Info("clients on the leader", zap.Int("server", i+1))
	t.Setup += fmt.Sprintf(" (server %d)", i+1)
	return all[i : i+1], nil
}
