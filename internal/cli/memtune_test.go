package cli

import (
	"testing"

	"github.com/orch/orch/internal/memtune"
)

func TestMemtuneOptionsGCPercent(t *testing.T) {
	for _, tc := range []struct {
		command       string
		agentDisabled bool
		want          int
	}{
		{"agent", false, memtune.AgentGCPercent},
		{"server", false, memtune.AgentGCPercent}, // runs its own agent
		{"server", true, 0},                       // API only: Go's default
	} {
		if got := memtuneOptions(tc.command, tc.agentDisabled).GCPercent; got != tc.want {
			t.Errorf("%s (agent disabled %v): GC percent %d, want %d", tc.command, tc.agentDisabled, got, tc.want)
		}
	}
}
