package cli

import (
	"testing"

	"github.com/orch/orch/internal/memtune"
)

func TestMemtuneOptionsGCPercent(t *testing.T) {
	for _, tc := range []struct {
		command       string
		agentDisabled bool
		want, idle    int
	}{
		{"agent", false, memtune.AgentGCPercent, memtune.IdleGCPercent},
		{"server", false, memtune.AgentGCPercent, memtune.IdleGCPercent}, // runs its own agent
		{"server", true, 0, 0}, // API only: Go's default
	} {
		o := memtuneOptions(tc.command, tc.agentDisabled)
		if o.GCPercent != tc.want || o.IdleGCPercent != tc.idle {
			t.Errorf("%s (agent disabled %v): GC percent %d idle %d, want %d and %d", tc.command, tc.agentDisabled,
				o.GCPercent, o.IdleGCPercent, tc.want, tc.idle)
		}
	}
}
