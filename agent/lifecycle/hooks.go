package lifecycle

import (
	"context"
	"errors"
	"time"

	"go.uber.org/zap"
	v1 "k8s.io/api/core/v1"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
)

// Event reasons and kubelet's constants.
const (
	ReasonFailedPostStartHook = "FailedPostStartHook"
	ReasonFailedPreStopHook   = "FailedPreStopHook"
	// MinimumGracePeriod is the least time between SIGTERM and SIGKILL.
	MinimumGracePeriod = 2 * time.Second
)

// ErrPostStartHook marks a failed postStart hook (kubelet's PostStartHookError).
var ErrPostStartHook = errors.New("PostStartHookError")

// HookError is a failed hook: Reason is the event/kill reason, Message
// kubelet's full message (it may hold the hook's output), Err the cause.
// errors.Is(err, ErrPostStartHook) holds for a postStart failure.
type HookError struct {
	Reason  string
	Message string
	Err     error
}

func (e *HookError) Error() string { return e.Message }

func (e *HookError) Unwrap() []error {
	if e.Reason == ReasonFailedPostStartHook {
		return []error{ErrPostStartHook, e.Err}
	}
	return []error{e.Err}
}

// PostStart runs c's postStart hook, if any. On failure it records a
// Warning FailedPostStartHook event and returns a *HookError; the caller must
// then kill the container with reason FailedPostStartHook (running its
// preStop as for any kill) and restart it per restartPolicy.
func (r *Runner) PostStart(ctx context.Context, pod *v1.Pod, c *v1.Container, containerID, podIP string) error {
	if c.Lifecycle == nil || c.Lifecycle.PostStart == nil {
		return nil
	}
	msg, err := r.Run(ctx, pod, c, containerID, podIP, c.Lifecycle.PostStart)
	if err == nil {
		return nil
	}
	r.log.Warn("postStart hook failed", zap.String("pod", pod.Namespace+"/"+pod.Name),
		zap.String("container", c.Name), zap.String("message", msg))
	r.rec.Eventf(pod, v1.EventTypeWarning, ReasonFailedPostStartHook, "PostStartHook failed")
	return &HookError{Reason: ReasonFailedPostStartHook, Message: msg, Err: err}
}

// PreStop runs c's preStop hook, if any and grace > 0, for at most grace,
// and returns the grace left for StopContainer: grace minus the hook's time,
// never below MinimumGracePeriod (kubelet applies that minimum to every
// kill, hook or not). A hook still running when grace ends is cancelled
// (and waited for: Deps.Exec must return when its context ends); a failed
// one records a Warning FailedPreStopHook event.
func (r *Runner) PreStop(ctx context.Context, pod *v1.Pod, c *v1.Container, containerID, podIP string, grace time.Duration) time.Duration {
	if c.Lifecycle != nil && c.Lifecycle.PreStop != nil && grace > 0 {
		grace -= r.runPreStop(ctx, pod, c, containerID, podIP, grace)
	}
	return max(grace, MinimumGracePeriod)
}

// runPreStop runs the hook for at most grace and returns how long it took.
func (r *Runner) runPreStop(ctx context.Context, pod *v1.Pod, c *v1.Container, containerID, podIP string, grace time.Duration) time.Duration {
	start := r.clock.Now()
	hookCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan struct{})
	go func() {
		defer close(done)
		msg, err := r.Run(hookCtx, pod, c, containerID, podIP, c.Lifecycle.PreStop)
		if err != nil && hookCtx.Err() != nil {
			r.log.Info("preStop hook cut short", zap.String("pod", pod.Namespace+"/"+pod.Name),
				zap.String("container", c.Name), zap.String("message", msg))
		} else if err != nil {
			r.log.Warn("preStop hook failed", zap.String("pod", pod.Namespace+"/"+pod.Name),
				zap.String("container", c.Name), zap.String("message", msg))
			r.rec.Eventf(pod, v1.EventTypeWarning, ReasonFailedPreStopHook, "PreStopHook failed")
		}
	}()
	t := r.clock.NewTimer(grace)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C():
		r.log.Info("preStop hook not completed in grace period", zap.String("pod", pod.Namespace+"/"+pod.Name),
			zap.String("container", c.Name), zap.Duration("grace", grace))
		cancel()
		<-done // Exec returns when its context ends (prober.ExecFunc's contract)
		return grace
	case <-ctx.Done():
		<-done
	}
	return min(r.clock.Since(start), grace)
}

type nopRecorder struct{}

func (nopRecorder) Eventf(k8sruntime.Object, string, string, string, ...interface{}) {}
