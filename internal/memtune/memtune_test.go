package memtune

import (
	"context"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"
)

func envOf(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

func TestOptions(t *testing.T) {
	tests := []struct {
		name    string
		env     map[string]string
		enabled bool
		settle  time.Duration
	}{
		{"defaults", nil, true, DefaultSettleAfter},
		{"off", map[string]string{"ORCH_MEMTUNE": "off"}, false, DefaultSettleAfter},
		{"zero disables", map[string]string{"ORCH_MEMTUNE": "0"}, false, DefaultSettleAfter},
		{"on", map[string]string{"ORCH_MEMTUNE": "on"}, true, DefaultSettleAfter},
		{"settle duration", map[string]string{"ORCH_MEMTUNE_SETTLE": "2m"}, true, 2 * time.Minute},
		{"settle now", map[string]string{"ORCH_MEMTUNE_SETTLE": "0"}, true, 0},
		{"bad settle", map[string]string{"ORCH_MEMTUNE_SETTLE": "soon"}, true, DefaultSettleAfter},
		{"negative settle", map[string]string{"ORCH_MEMTUNE_SETTLE": "-1s"}, true, DefaultSettleAfter},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := Options{Getenv: envOf(tt.env)}
			if got := o.Enabled(); got != tt.enabled {
				t.Errorf("Enabled() = %v, want %v", got, tt.enabled)
			}
			if got := o.SettleAfter(zaptest.NewLogger(t)); got != tt.settle {
				t.Errorf("SettleAfter() = %v, want %v", got, tt.settle)
			}
		})
	}
}

func TestStartStopsWithContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	// Cancelled before the settle point: the goroutine returns without settling.
	Start(ctx, zaptest.NewLogger(t), Options{Getenv: envOf(map[string]string{"GOGC": "100"})})
}
