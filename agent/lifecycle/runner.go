package lifecycle

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/orch/orch/agent/prober"
	"go.uber.org/zap"
	v1 "k8s.io/api/core/v1"
	"k8s.io/utils/clock"
)

// Deps are the Runner's collaborators.
type Deps struct {
	// Exec runs exec hooks (prober.ExecFromRuntime adapts the runtime).
	Exec prober.ExecFunc
	// Recorder gets the FailedPostStartHook/FailedPreStopHook events; nil drops them.
	Recorder prober.Recorder
	// Clock times sleep hooks and the preStop grace period; defaults to the real clock.
	Clock prober.Clock
	// HTTPClient defaults to prober.NewHTTPClient().
	HTTPClient *http.Client
}

// Runner runs lifecycle hooks. It is safe for concurrent use.
type Runner struct {
	log    *zap.Logger
	exec   prober.ExecFunc
	rec    prober.Recorder
	clock  prober.Clock
	client *http.Client
}

// Errors of hook handlers, for errors.Is.
var (
	ErrInvalidHandler = errors.New("invalid handler")
	ErrNoExec         = errors.New("exec is not configured")
	ErrSleepCut       = errors.New("container terminated before sleep hook finished")
	ErrExitCode       = errors.New("command exited with a non-zero code")
)

// New returns a Runner.
func New(log *zap.Logger, deps Deps) *Runner {
	r := &Runner{log: log.Named("lifecycle"), exec: deps.Exec, rec: deps.Recorder, clock: deps.Clock, client: deps.HTTPClient}
	if r.rec == nil {
		r.rec = nopRecorder{}
	}
	if r.clock == nil {
		r.clock = clock.RealClock{}
	}
	if r.client == nil {
		r.client = prober.NewHTTPClient()
	}
	return r
}

// Run runs one hook handler of container c (running as containerID in pod,
// whose IP is podIP) and returns kubelet's failure message with the error.
func (r *Runner) Run(ctx context.Context, pod *v1.Pod, c *v1.Container, containerID, podIP string, h *v1.LifecycleHandler) (string, error) {
	switch {
	case h.Exec != nil:
		out, err := r.runExec(ctx, containerID, h.Exec.Command)
		if err != nil {
			return fmt.Sprintf("Exec lifecycle hook (%v) for Container %q in Pod %q failed - error: %v, message: %q",
				h.Exec.Command, c.Name, podDesc(pod), err, string(out)), err
		}
	case h.HTTPGet != nil:
		if err := r.runHTTP(ctx, c, podIP, h.HTTPGet); err != nil {
			return fmt.Sprintf("HTTP lifecycle hook (%s) for Container %q in Pod %q failed - error: %v",
				h.HTTPGet.Path, c.Name, podDesc(pod), err), err
		}
	case h.Sleep != nil:
		if err := r.runSleep(ctx, h.Sleep.Seconds); err != nil {
			return fmt.Sprintf("Sleep lifecycle hook (%d) for Container %q in Pod %q failed - error: %v",
				h.Sleep.Seconds, c.Name, podDesc(pod), err), err
		}
	default: // tcpSocket too: deprecated and never supported by kubelet
		err := fmt.Errorf("%w: %s", ErrInvalidHandler, handlerKind(h))
		return fmt.Sprintf("Cannot run handler: %v", err), err
	}
	return "", nil
}

func (r *Runner) runExec(ctx context.Context, id string, cmd []string) ([]byte, error) {
	if r.exec == nil {
		return nil, ErrNoExec
	}
	code, out, err := r.exec(ctx, id, cmd)
	if err != nil {
		return out, fmt.Errorf("exec %q: %w", strings.Join(cmd, " "), err)
	}
	if code != 0 {
		return out, fmt.Errorf("%w: command '%s' exited with %d", ErrExitCode, strings.Join(cmd, " "), code)
	}
	return out, nil
}

// runHTTP sends the GET; like kubelet it fails only when no response came.
func (r *Runner) runHTTP(ctx context.Context, c *v1.Container, podIP string, a *v1.HTTPGetAction) error {
	req, err := prober.NewHTTPGetRequest(ctx, a, c, podIP, "lifecycle")
	if err != nil {
		return err
	}
	resp, err := r.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 10*1024))
	return nil
}

func (r *Runner) runSleep(ctx context.Context, seconds int64) error {
	if seconds <= 0 {
		return nil
	}
	t := r.clock.NewTimer(time.Duration(seconds) * time.Second)
	defer t.Stop()
	select {
	case <-t.C():
		return nil
	case <-ctx.Done():
		return ErrSleepCut
	}
}

// podDesc is kubelet's format.Pod: name_namespace(uid).
func podDesc(pod *v1.Pod) string {
	return fmt.Sprintf("%s_%s(%s)", pod.Name, pod.Namespace, pod.UID)
}

func handlerKind(h *v1.LifecycleHandler) string {
	if h.TCPSocket != nil {
		return "tcpSocket is not supported in lifecycle hooks"
	}
	return "no action set"
}
