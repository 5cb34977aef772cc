package runtime

import (
	"context"
	"fmt"
	"io"
	"sync"

	containerd "github.com/containerd/containerd/v2/client"
	"github.com/containerd/containerd/v2/pkg/cio"
	"go.uber.org/zap"
)

// Container stdio: the shim feeds the container's stdout/stderr into FIFOs
// in <fifo-dir>/<id>/ and reads its stdin from a FIFO there (only for
// containers with stdin). The agent holds the other ends (ctrIO): output is
// written to the CRI log file and to every attached client (fanout); stdin
// is a pipe that attached clients write into. The FIFOs outlive the agent,
// so a restarted agent opens them again (Recover) and both the log and
// attach keep working; the container's stdin stays open meanwhile (the
// shim keeps its end of the stdin FIFO; TestRecoverAfterAgentRestart).

// ctrIO is the agent's end of one container's stdio.
type ctrIO struct {
	io      cio.IO
	stdout  *fanout
	stderr  *fanout
	stdinR  *io.PipeReader // read by cio into the stdin FIFO; nil without stdin
	stdinW  *io.PipeWriter
	once    bool // stdinOnce
	tty     bool
	done    chan struct{} // closed once the output copy ended
	closeMu sync.Mutex
	closed  bool
}

func newCtrIO(s *logStreams, stdin string, tty bool) *ctrIO {
	x := &ctrIO{stdout: newFanout(s.stdout), stderr: newFanout(s.stderr), tty: tty, done: make(chan struct{})}
	if stdin != "" {
		x.stdinR, x.stdinW = io.Pipe()
		x.once = stdin == "once"
	}
	return x
}

// attach opens the container's FIFO set with this IO's streams.
func (x *ctrIO) attach() cio.Attach {
	var stdin io.Reader // a nil *PipeReader must stay an untyped nil
	if x.stdinR != nil {
		stdin = x.stdinR
	}
	return cio.NewAttach(cio.WithStreams(stdin, x.stdout, x.stderr))
}

// closeStdin ends the container's stdin (the FIFO writer closes, the shim
// passes EOF on).
func (x *ctrIO) closeStdin() {
	if x.stdinW != nil {
		_ = x.stdinW.Close()
	}
}

// finish closes the log streams and detaches every client; it runs once
// the output copy ended.
func (x *ctrIO) finish() {
	x.closeMu.Lock()
	defer x.closeMu.Unlock()
	if x.closed {
		return
	}
	x.closed = true
	x.stdout.close()
	x.stderr.close()
	if x.stdinR != nil {
		_ = x.stdinR.Close() // unblocks cio's stdin copy
	}
	close(x.done)
}

// stop ends the FIFO copy (agent shutdown, container removal).
func (x *ctrIO) stop() {
	x.io.Cancel()
	_ = x.io.Close()
	x.finish()
}

// fanout writes one container stream to its log and to attached clients,
// in order; a client whose write fails is detached.
type fanout struct {
	log     io.WriteCloser
	mu      sync.Mutex
	clients map[int]*client
	next    int
	closed  bool
}

type client struct {
	w    io.Writer
	done chan struct{}
}

func newFanout(log io.WriteCloser) *fanout { return &fanout{log: log, clients: map[int]*client{}} }

func (f *fanout) Write(p []byte) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed { // stopped while the copy still ran
		return len(p), nil
	}
	_, _ = f.log.Write(p)
	for k, c := range f.clients {
		if _, err := c.w.Write(p); err != nil {
			delete(f.clients, k)
			close(c.done)
		}
	}
	return len(p), nil
}

// add attaches w; done closes when w is detached or the stream ends.
func (f *fanout) add(w io.Writer) (key int, done <-chan struct{}) {
	f.mu.Lock()
	defer f.mu.Unlock()
	c := &client{w: w, done: make(chan struct{})}
	if f.closed {
		close(c.done)
		return -1, c.done
	}
	f.next++
	f.clients[f.next] = c
	return f.next, c.done
}

func (f *fanout) remove(key int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if c, ok := f.clients[key]; ok {
		delete(f.clients, key)
		close(c.done)
	}
}

func (f *fanout) close() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return
	}
	f.closed = true
	_ = f.log.Close()
	for k, c := range f.clients {
		delete(f.clients, k)
		close(c.done)
	}
}

// Attach implements Interface: see AttachRequest.
func (r *Containerd) Attach(ctx context.Context, id string, req AttachRequest) error {
	ctx = r.nsCtx(ctx)
	r.mu.Lock()
	x := r.ios[id]
	r.mu.Unlock()
	if x == nil {
		return fmt.Errorf("attach to %s: %w", id, ErrNotAttachable)
	}
	select {
	case <-x.done:
		return fmt.Errorf("attach to %s: %w", id, ErrNotAttachable)
	default:
	}
	if req.Resize != nil && x.tty {
		if err := r.resizeTask(ctx, id, req.Resize); err != nil {
			return err
		}
	}
	var outs []<-chan struct{}
	detach := func() {}
	if req.Stdout != nil {
		k, d := x.stdout.add(req.Stdout)
		outs, detach = append(outs, d), func() { x.stdout.remove(k) }
	}
	if req.Stderr != nil && !x.tty {
		k, d := x.stderr.add(req.Stderr)
		prev := detach
		outs, detach = append(outs, d), func() { prev(); x.stderr.remove(k) }
	}
	defer detach()
	stdinDone := r.attachStdin(ctx, id, x, req.Stdin, detach)
	if len(outs) == 0 {
		select {
		case <-stdinDone:
		case <-x.done:
		case <-ctx.Done():
		}
		return nil
	}
	for _, d := range outs {
		select {
		case <-d:
		case <-ctx.Done():
			return nil
		}
	}
	return nil
}

// attachStdin copies a client's input into the container's stdin. When it
// ends, stdinOnce without a TTY closes the container's stdin; otherwise the
// client is detached. Without a container stdin the input is drained.
func (r *Containerd) attachStdin(ctx context.Context, id string, x *ctrIO, in io.Reader, detach func()) <-chan struct{} {
	done := make(chan struct{})
	if in == nil {
		return done // never closes: output decides
	}
	go func() {
		defer close(done)
		if x.stdinW == nil {
			_, _ = io.Copy(io.Discard, in)
			return
		}
		_, _ = io.Copy(x.stdinW, in)
		if x.once && !x.tty {
			x.closeStdin()
			r.closeTaskStdin(context.WithoutCancel(ctx), id)
			return
		}
		detach()
	}()
	return done
}

func (r *Containerd) closeTaskStdin(ctx context.Context, id string) {
	c, err := r.load(ctx, id)
	if err != nil {
		return
	}
	if task, err := c.Task(ctx, nil); err == nil {
		if err := task.CloseIO(ctx, containerd.WithStdinCloser); err != nil {
			r.log.Debug("close container stdin", zap.String("id", id), zap.Error(err))
		}
	}
}

// resizeTask applies terminal sizes from ch to the container's TTY until
// ch closes or ctx ends.
func (r *Containerd) resizeTask(ctx context.Context, id string, ch <-chan TerminalSize) error {
	c, err := r.load(ctx, id)
	if err != nil {
		return err
	}
	task, err := c.Task(ctx, nil)
	if err != nil {
		return fmt.Errorf("attach to %s: %w", id, ErrNotAttachable)
	}
	go applyResizes(ctx, ch, func(s TerminalSize) error {
		return task.Resize(context.WithoutCancel(ctx), uint32(s.Width), uint32(s.Height))
	}, r.log)
	return nil
}

func applyResizes(ctx context.Context, ch <-chan TerminalSize, resize func(TerminalSize) error, log *zap.Logger) {
	for {
		select {
		case <-ctx.Done():
			return
		case s, ok := <-ch:
			if !ok {
				return
			}
			if s.Width == 0 || s.Height == 0 {
				continue
			}
			if err := resize(s); err != nil {
				log.Debug("resize terminal", zap.Error(err))
			}
		}
	}
}
