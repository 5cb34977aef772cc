package runtime

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"syscall"
	"time"

	"github.com/containerd/containerd/api/services/tasks/v1"
	containerd "github.com/containerd/containerd/v2/client"
	"github.com/containerd/containerd/v2/pkg/cio"
	specs "github.com/opencontainers/runtime-spec/specs-go"
	"go.uber.org/zap"
)

// Exec runs req.Cmd in the running container id, streams its output and
// returns its exit code. When ctx ends first, the process is killed and the
// context error returned.
func (r *Containerd) Exec(ctx context.Context, id string, req ExecRequest) (int, error) {
	ctx = r.nsCtx(ctx)
	if len(req.Cmd) == 0 {
		return -1, errors.New("exec: empty command")
	}
	target, err := r.execTarget(ctx, id)
	if err != nil {
		return -1, err
	}
	task, pspec := target.task, *target.proc
	pspec.Args = req.Cmd
	pspec.Terminal = req.TTY
	pspec.ConsoleSize = nil
	if req.TTY {
		if sz, ok := firstSize(ctx, req.Resize); ok {
			pspec.ConsoleSize = &specs.Box{Width: uint(sz.Width), Height: uint(sz.Height)}
		}
	}
	execID := randomID()
	ioOpts := []cio.Opt{cio.WithFIFODir(r.fifoDir(id))}
	stdin := &closeNotifier{r: req.Stdin}
	if req.Stdin != nil {
		ioOpts = append(ioOpts, cio.WithStreams(stdin, orDiscard(req.Stdout), orDiscard(req.Stderr)))
	} else {
		ioOpts = append(ioOpts, cio.WithStreams(nil, orDiscard(req.Stdout), orDiscard(req.Stderr)))
	}
	if req.TTY {
		ioOpts = append(ioOpts, cio.WithTerminal)
	}
	if err := os.MkdirAll(r.fifoDir(id), 0o700); err != nil {
		return -1, fmt.Errorf("exec: fifo dir: %w", err)
	}
	bg := context.WithoutCancel(ctx)
	proc, err := task.Exec(bg, execID, &pspec, cio.NewCreator(ioOpts...))
	if err != nil {
		r.dropExecTarget(id) // the task may be gone: look it up again next time
		return -1, fmt.Errorf("exec in %s: %w", id, err)
	}
	var resize <-chan TerminalSize
	if req.TTY {
		resize = req.Resize
	}
	code, exited, err := r.runExec(ctx, bg, proc, stdin, req.Stdin != nil, resize)
	r.deleteExec(bg, task.ID(), proc, exited)
	return code, err
}

// deleteExec removes an exec'd process from its task and closes its FIFOs.
// One whose exit was seen is deleted with a single call: Process.Delete
// with WithProcessKill would first open another Wait stream, send a
// SIGKILL to a process that is gone and ask for its status, three more
// round trips through containerd to the shim on every exec probe.
func (r *Containerd) deleteExec(ctx context.Context, containerID string, proc containerd.Process, exited bool) {
	if !exited {
		_, _ = proc.Delete(ctx, containerd.WithProcessKill)
		return
	}
	_, err := r.client.TaskService().DeleteProcess(ctx, &tasks.DeleteProcessRequest{ContainerID: containerID, ExecID: proc.ID()})
	if err != nil {
		r.log.Debug("deleting an exited exec process", zap.String("container", containerID), zap.Error(err))
	}
	if pio := proc.IO(); pio != nil {
		pio.Cancel()
		pio.Wait()
		_ = pio.Close()
	}
}

// execTarget is what an exec needs of a running container: its task and
// its process spec.
type execTarget struct {
	task containerd.Task
	proc *specs.Process
}

// execTarget returns the container's task and process spec, read from
// containerd (the container record with its whole OCI spec, then the task
// from its shim) on the first exec only: probes exec every few seconds, a
// container ID's spec never changes and its task lives as long as it runs.
func (r *Containerd) execTarget(ctx context.Context, id string) (execTarget, error) {
	r.mu.Lock()
	t, ok := r.execs[id]
	r.mu.Unlock()
	if ok {
		return t, nil
	}
	c, err := r.load(ctx, id)
	if err != nil {
		return execTarget{}, err
	}
	task, err := c.Task(ctx, nil)
	if err != nil {
		return execTarget{}, fmt.Errorf("exec in %s: container not running: %w", id, err)
	}
	spec, err := c.Spec(ctx)
	if err != nil {
		return execTarget{}, fmt.Errorf("exec in %s: spec: %w", id, err)
	}
	if spec.Process == nil {
		return execTarget{}, fmt.Errorf("exec in %s: no process in the spec", id)
	}
	t = execTarget{task: task, proc: spec.Process}
	r.mu.Lock()
	if r.execs != nil {
		r.execs[id] = t
	}
	r.mu.Unlock()
	return t, nil
}

func (r *Containerd) dropExecTarget(id string) {
	r.mu.Lock()
	delete(r.execs, id)
	r.mu.Unlock()
}

// firstSizeWait bounds how long a TTY exec waits for the client's first
// terminal size (client-go sends it right after the streams open) so that
// the process starts with the right size.
const firstSizeWait = 500 * time.Millisecond

func firstSize(ctx context.Context, ch <-chan TerminalSize) (TerminalSize, bool) {
	if ch == nil {
		return TerminalSize{}, false
	}
	t := time.NewTimer(firstSizeWait)
	defer t.Stop()
	select {
	case s, ok := <-ch:
		return s, ok && s.Width > 0 && s.Height > 0
	case <-t.C:
	case <-ctx.Done():
	}
	return TerminalSize{}, false
}

// runExec starts proc and waits for its exit (killing it when ctx ends
// first); exited reports that its exit status was received.
func (r *Containerd) runExec(ctx, bg context.Context, proc containerd.Process, stdin *closeNotifier, hasStdin bool,
	resize <-chan TerminalSize) (code int, exited bool, err error) {
	exitCh, err := proc.Wait(bg)
	if err != nil {
		return -1, false, fmt.Errorf("exec wait: %w", err)
	}
	if err := proc.Start(bg); err != nil {
		return -1, false, fmt.Errorf("exec start: %w", err)
	}
	if resize != nil {
		rctx, cancel := context.WithCancel(ctx)
		defer cancel()
		go applyResizes(rctx, resize, func(s TerminalSize) error {
			return proc.Resize(bg, uint32(s.Width), uint32(s.Height))
		}, r.log)
	}
	if hasStdin {
		stdin.onEOF(func() { _ = proc.CloseIO(bg, containerd.WithStdinCloser) })
	}
	select {
	case st := <-exitCh:
		proc.IO().Wait() // all output copied
		code, _, err := st.Result()
		if err != nil {
			return -1, false, fmt.Errorf("exec result: %w", err)
		}
		return int(code), true, nil
	case <-ctx.Done():
		_ = proc.Kill(bg, syscall.SIGKILL)
		st := <-exitCh
		_, _, err := st.Result()
		return -1, err == nil, ctx.Err()
	}
}

func orDiscard(w io.Writer) io.Writer {
	if w == nil {
		return io.Discard
	}
	return w
}

func randomID() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return "exec-" + hex.EncodeToString(b)
}

// closeNotifier runs a callback once its reader hits EOF (to close the
// process's stdin after the caller's input ends).
type closeNotifier struct {
	r    io.Reader
	mu   sync.Mutex
	eof  bool
	hook func()
}

func (c *closeNotifier) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	if err == io.EOF {
		c.mu.Lock()
		c.eof = true
		h := c.hook
		c.mu.Unlock()
		if h != nil {
			h()
		}
	}
	return n, err
}

func (c *closeNotifier) onEOF(f func()) {
	c.mu.Lock()
	c.hook = f
	eof := c.eof
	c.mu.Unlock()
	if eof {
		f()
	}
}
