package prober

import (
	"context"
	"time"

	"go.uber.org/zap"
	v1 "k8s.io/api/core/v1"
)

// worker probes one probe of one running container, from its initial delay
// on every period, until its container is replaced or removed, a liveness or
// startup probe fails (held until the loop restarts the container), or a
// startup probe succeeds.
type worker struct {
	m     *Manager
	cs    *containerState
	kind  Kind
	probe *v1.Probe
	th    threshold
}

func (w *worker) run() {
	defer w.m.wg.Done()
	ctx := w.cs.ctx
	if w.kind != Startup {
		select { // startup gates liveness and readiness
		case <-w.cs.started:
		case <-ctx.Done():
			return
		}
	}
	next := w.cs.startedAt.Add(time.Duration(w.probe.InitialDelaySeconds) * time.Second)
	for {
		if !w.sleepUntil(ctx, next) {
			return
		}
		if now := w.m.clock.Now(); now.After(next) {
			next = now
		}
		if !w.probeOnce(ctx) {
			return
		}
		next = next.Add(period(w.probe))
	}
}

// sleepUntil waits on a clock timer until t; false when the worker stops.
func (w *worker) sleepUntil(ctx context.Context, t time.Time) bool {
	d := t.Sub(w.m.clock.Now())
	if d <= 0 {
		return ctx.Err() == nil
	}
	timer := w.m.clock.NewTimer(d)
	defer timer.Stop()
	w.m.sleeping.Add(1)
	defer w.m.sleeping.Add(-1)
	select {
	case <-timer.C():
		return true
	case <-ctx.Done():
		return false
	}
}

// probeOnce runs the probe once and applies thresholds; false ends the worker.
func (w *worker) probeOnce(ctx context.Context) bool {
	if w.kind != Readiness && w.m.isTerminating(w.cs) {
		return false
	}
	pod, ip := w.m.podAndIP(w.cs)
	if pod == nil {
		return false
	}
	var (
		out outcome
		msg string
		err error
	)
	for range maxRetries { // kubelet retries a probe that errored
		if out, msg, err = w.m.runProbe(ctx, w.probe, w.cs.spec, w.cs.id, ip); err == nil || ctx.Err() != nil {
			break
		}
	}
	if ctx.Err() != nil {
		return false // stopped while probing: the result means nothing
	}
	w.m.metrics.observe(w.kind, probeResult(out, err), pod, w.cs.name)
	if err != nil {
		w.m.log.Debug("probe errored", zap.String("pod", pod.Namespace+"/"+pod.Name),
			zap.String("container", w.cs.name), zap.Stringer("probe", w.kind), zap.Error(err))
		w.m.rec.Eventf(pod, EventTypeWarning, ReasonUnhealthy, "%s probe errored and resulted in unknown state: %s", w.kind, err)
		return true // kubelet throws such a result away
	}
	r := Success
	switch out {
	case outFailure:
		r = Failure
		w.m.rec.Eventf(pod, EventTypeWarning, ReasonUnhealthy, "%s probe failed: %s", w.kind, msg)
	case outWarning:
		w.m.rec.Eventf(pod, EventTypeWarning, ReasonProbeWarning, "%s probe warning: %s", w.kind, msg)
	}
	if !w.th.observe(r, successThreshold(w.probe), failureThreshold(w.probe)) {
		return true
	}
	w.m.setResult(w.cs, w.kind, r, msg)
	if r == Failure && (w.kind == Liveness || w.kind == Startup) {
		return false // hold until the container is restarted (a new ID)
	}
	return !(r == Success && w.kind == Startup)
}

// runProbe runs p's handler within its timeout.
func (m *Manager) runProbe(ctx context.Context, p *v1.Probe, c *v1.Container, id, podIP string) (outcome, string, error) {
	timeout := probeTimeout(p)
	ctx, cancel := withClockTimeout(ctx, m.clock, timeout)
	defer cancel()
	switch {
	case p.Exec != nil:
		return probeExec(ctx, m.exec, id, ExpandCommand(p.Exec.Command, c.Env), timeout)
	case p.HTTPGet != nil:
		return probeHTTP(ctx, m.client, p.HTTPGet, c, podIP)
	case p.TCPSocket != nil:
		return probeTCP(ctx, p.TCPSocket, c, podIP)
	case p.GRPC != nil:
		return probeGRPC(ctx, p.GRPC, podIP, timeout)
	}
	return outFailure, "", ErrNoHandler
}

// threshold counts equal results in a row.
type threshold struct {
	last Result
	run  int
}

// observe records r and says whether it has now been seen threshold times in
// a row (successT for Success, failureT for Failure), so it becomes the
// probe's result.
func (t *threshold) observe(r Result, successT, failureT int) bool {
	if r == t.last {
		t.run++
	} else {
		t.last, t.run = r, 1
	}
	if r == Failure {
		return t.run >= failureT
	}
	return t.run >= successT
}

func period(p *v1.Probe) time.Duration {
	if p.PeriodSeconds <= 0 {
		return defaultPeriod
	}
	return time.Duration(p.PeriodSeconds) * time.Second
}

func successThreshold(p *v1.Probe) int {
	if p.SuccessThreshold <= 0 {
		return 1
	}
	return int(p.SuccessThreshold)
}

func failureThreshold(p *v1.Probe) int {
	if p.FailureThreshold <= 0 {
		return defaultThreshold
	}
	return int(p.FailureThreshold)
}

// probeResult is a probe run's prober_probe_total result label.
func probeResult(out outcome, err error) string {
	switch {
	case err != nil:
		return resultUnknown
	case out == outFailure:
		return resultFailed
	}
	return resultSuccessful
}
