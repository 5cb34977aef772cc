package memtune

import (
	"context"
	"os"
	"runtime"
	"runtime/debug"
	"time"

	"go.uber.org/zap"
)

// DefaultSettleAfter is how long after start Settle runs.
const DefaultSettleAfter = 30 * time.Second

// AgentGCPercent is the GC percent of `orch agent`, and of `orch server`
// running its own agent, unless GOGC is set: the heap may grow to 1.5x the
// live heap before a collection instead of Go's 2x. A node allocates little
// when idle, so this costs a few milliseconds of GC every few seconds; it
// saves ~2 MiB in an agent and several in a server with its agent.
const AgentGCPercent = 50

// Options say what to tune. GCPercent 0 keeps Go's default (100); with
// IdleGCPercent too, the percent drops to IdleGCPercent while collections
// are far apart and goes back to GCPercent when they come close together
// (see gcTuner). GOGC in the environment always wins. Getenv is os.Getenv
// unless a test passes its own.
type Options struct {
	GCPercent     int
	IdleGCPercent int
	Getenv        func(string) string
}

func (o Options) env(k string) string {
	if o.Getenv == nil {
		return os.Getenv(k)
	}
	return o.Getenv(k)
}

// Enabled reports whether ORCH_MEMTUNE allows tuning.
func (o Options) Enabled() bool {
	switch o.env("ORCH_MEMTUNE") {
	case "off", "0", "false", "no":
		return false
	}
	return true
}

// SettleAfter is the delay before Settle (ORCH_MEMTUNE_SETTLE, default 30s).
func (o Options) SettleAfter(log *zap.Logger) time.Duration {
	v := o.env("ORCH_MEMTUNE_SETTLE")
	if v == "" {
		return DefaultSettleAfter
	}
	if v == "0" {
		return 0
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < 0 {
		log.Warn("ignoring ORCH_MEMTUNE_SETTLE, want a duration like 30s", zap.String("value", v))
		return DefaultSettleAfter
	}
	return d
}

// Start applies the runtime defaults now and runs Settle once, in the
// background, after SettleAfter (or never if ctx ends first). It does
// nothing when ORCH_MEMTUNE=off.
func Start(ctx context.Context, log *zap.Logger, o Options) {
	log = log.Named("memtune")
	if !o.Enabled() {
		log.Debug("memory tuning off (ORCH_MEMTUNE)")
		return
	}
	if o.GCPercent > 0 && o.env("GOGC") == "" {
		if o.IdleGCPercent > 0 {
			tuneGC(ctx, o.GCPercent, o.IdleGCPercent) // starts at GCPercent
		} else {
			debug.SetGCPercent(o.GCPercent)
		}
	}
	after := o.SettleAfter(log)
	go func() {
		t := time.NewTimer(after)
		defer t.Stop()
		select {
		case <-ctx.Done():
		case <-t.C:
			Settle(log)
		}
	}()
}

// Settle returns what start-up needed and idle running does not: free heap
// pages (a full GC, then debug.FreeOSMemory) and the binary's clean
// read-only pages that only this process maps (see package doc).
func Settle(log *zap.Logger) {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	debug.FreeOSMemory()
	runtime.ReadMemStats(&after)
	released, err := releaseBinary()
	if err != nil {
		log.Debug("binary pages not released", zap.Error(err))
	}
	log.Debug("settled after start-up",
		zap.Uint64("heap_inuse_bytes", after.HeapInuse),
		zap.Uint64("heap_released_bytes", after.HeapReleased-before.HeapReleased),
		zap.Int64("binary_bytes_advised", released))
}
