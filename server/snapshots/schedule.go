package snapshots

import (
	"context"
	"fmt"
	"time"

	"github.com/robfig/cron/v3"
	"go.uber.org/zap"
)

// parseCron parses a standard 5-field cron spec (or @every/@daily
// descriptors) in local time, as k3s does.
func parseCron(spec string) (cron.Schedule, error) {
	s, err := cron.ParseStandard(spec)
	if err != nil {
		return nil, fmt.Errorf("cron spec %q: %w", spec, err)
	}
	return s, nil
}

// NextTimes returns the next n times spec fires after from.
func NextTimes(spec string, from time.Time, n int) ([]time.Time, error) {
	s, err := parseCron(spec)
	if err != nil {
		return nil, err
	}
	out := make([]time.Time, 0, n)
	for t := from; len(out) < n; {
		t = s.Next(t)
		out = append(out, t)
	}
	return out, nil
}

// RunSchedule calls job at every time spec fires until ctx ends. It sleeps
// on a timer until the next time (no polling); a job that overruns skips
// the times it missed.
func RunSchedule(ctx context.Context, spec string, job func(context.Context), log *zap.Logger) error {
	s, err := parseCron(spec)
	if err != nil {
		return err
	}
	for {
		next := s.Next(time.Now())
		log.Debug("next scheduled snapshot", zap.Time("at", next))
		t := time.NewTimer(time.Until(next))
		select {
		case <-ctx.Done():
			t.Stop()
			return nil
		case <-t.C:
			job(ctx)
		}
	}
}

// Scheduled is the job of automatic snapshots: save one named
// DefaultName, then prune to retention.
func Scheduled(store Saver, dir, node string, retention int, log *zap.Logger) func(context.Context) {
	return func(ctx context.Context) {
		i, err := Save(ctx, store, dir, DefaultName, node)
		if err != nil {
			log.Error("scheduled datastore snapshot failed", zap.Error(err))
			return
		}
		log.Info("saved scheduled datastore snapshot", zap.String("name", i.Name),
			zap.Int64("revision", i.Revision), zap.Int64("size", i.Size))
		pruned, err := Prune(dir, DefaultName, retention)
		if err != nil {
			log.Error("pruning datastore snapshots failed", zap.Error(err))
		}
		if len(pruned) > 0 {
			log.Info("pruned datastore snapshots", zap.Strings("names", pruned), zap.Int("retention", retention))
		}
	}
}
