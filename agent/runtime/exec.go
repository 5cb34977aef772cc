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

	containerd "github.com/containerd/containerd/v2/client"
	"github.com/containerd/containerd/v2/pkg/cio"
	specs "github.com/opencontainers/runtime-spec/specs-go"
)

// Exec runs req.Cmd in the running container id, streams its output and
// returns its exit code. When ctx ends first, the process is killed and the
// context error returned.
func (r *Containerd) Exec(ctx context.Context, id string, req ExecRequest) (int, error) {
	ctx = r.nsCtx(ctx)
	if len(req.Cmd) == 0 {
		return -1, errors.New("exec: empty command")
	}
	c, err := r.load(ctx, id)
	if err != nil {
		return -1, err
	}
	task, err := c.Task(ctx, nil)
	if err != nil {
		return -1, fmt.Errorf("exec in %s: container not running: %w", id, err)
	}
	pspec, err := r.processSpec(ctx, c)
	if err != nil {
		return -1, fmt.Errorf("exec in %s: spec: %w", id, err)
	}
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
		return -1, fmt.Errorf("exec in %s: %w", id, err)
	}
	defer func() { _, _ = proc.Delete(bg, containerd.WithProcessKill) }()
	var resize <-chan TerminalSize
	if req.TTY {
		resize = req.Resize
	}
	return r.runExec(ctx, bg, proc, stdin, req.Stdin != nil, resize)
}

// firstSizeWait bounds how long a TTY exec waits for the client's first
// terminal size (client-go sends it right after the streams open) so that
// the process starts with the right size.
// processSpec returns a copy of the container's process spec, read from
// containerd (a round trip and the whole OCI spec decoded) once per
// container.
func (r *Containerd) processSpec(ctx context.Context, c containerd.Container) (specs.Process, error) {
	r.mu.Lock()
	p, ok := r.procs[c.ID()]
	r.mu.Unlock()
	if !ok {
		spec, err := c.Spec(ctx)
		if err != nil {
			return specs.Process{}, err
		}
		if spec.Process == nil {
			return specs.Process{}, errors.New("no process in the spec")
		}
		p = spec.Process
		r.mu.Lock()
		if r.procs != nil {
			r.procs[c.ID()] = p
		}
		r.mu.Unlock()
	}
	return *p, nil
}

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

func (r *Containerd) runExec(ctx, bg context.Context, proc containerd.Process, stdin *closeNotifier, hasStdin bool, resize <-chan TerminalSize) (int, error) {
	exitCh, err := proc.Wait(bg)
	if err != nil {
		return -1, fmt.Errorf("exec wait: %w", err)
	}
	if err := proc.Start(bg); err != nil {
		return -1, fmt.Errorf("exec start: %w", err)
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
			return -1, fmt.Errorf("exec result: %w", err)
		}
		return int(code), nil
	case <-ctx.Done():
		_ = proc.Kill(bg, syscall.SIGKILL)
		<-exitCh
		return -1, ctx.Err()
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
