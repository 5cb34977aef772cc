package kubeletapi

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/orch/orch/agent/runtime"
)

// serveLogs answers GET /containerLogs/{ns}/{pod}/{container}.
func (s *Server) serveLogs(w http.ResponseWriter, r *http.Request) {
	opts, err := parseLogOptions(r.URL.Query(), time.Now())
	if err != nil {
		writeErr(w, badRequest(err.Error()))
		return
	}
	pod, id, err := s.container(r)
	if err != nil {
		writeErr(w, err)
		return
	}
	st, err := s.cfg.Runtime.ContainerStatus(r.Context(), id)
	if err != nil {
		writeErr(w, fmt.Errorf("container %s status: %w", r.PathValue("container"), err))
		return
	}
	path := st.LogPath
	if path == "" {
		path = filepath.Join(s.cfg.LogDir, fmt.Sprintf("%s_%s_%s", r.PathValue("ns"), r.PathValue("pod"), pod.UID),
			st.Name, fmt.Sprintf("%d.log", st.RestartCount))
	}
	if opts.previous {
		if path, err = previousLog(path, st.RestartCount); err != nil {
			writeErr(w, badRequest(fmt.Sprintf("previous terminated container %q in pod %q not found", r.PathValue("container"), r.PathValue("pod"))))
			return
		}
		opts.follow = false
	}
	w.Header().Set("Content-Type", "text/plain")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(http.StatusOK)
	running := func(ctx context.Context) bool {
		cur, err := s.cfg.Runtime.ContainerStatus(ctx, id)
		return err == nil && cur.State == runtime.StateRunning
	}
	t := &logTail{path: path, opts: opts, poll: s.cfg.FollowPoll, running: running, out: newFlushWriter(w)}
	if err := t.run(r.Context()); err != nil && !errors.Is(err, errLimit) && !errors.Is(err, context.Canceled) {
		s.log.Debug("container log stream ended", zap.String("path", path), zap.Error(err))
	}
}

// previousLog is the log of the latest attempt before restartCount.
func previousLog(path string, restartCount int) (string, error) {
	entries, err := os.ReadDir(filepath.Dir(path))
	if err != nil {
		return "", err
	}
	best := -1
	for _, e := range entries {
		n, err := strconv.Atoi(strings.TrimSuffix(e.Name(), ".log"))
		if err == nil && strings.HasSuffix(e.Name(), ".log") && n < restartCount && n > best {
			best = n
		}
	}
	if best < 0 {
		return "", os.ErrNotExist
	}
	return filepath.Join(filepath.Dir(path), fmt.Sprintf("%d.log", best)), nil
}

// rotatedFiles lists path's rotated files, oldest first (path.2 before path.1).
func rotatedFiles(path string) []string {
	matches, _ := filepath.Glob(path + ".*")
	type rf struct {
		n    int
		path string
	}
	var fs []rf
	for _, m := range matches {
		if n, err := strconv.Atoi(strings.TrimPrefix(m, path+".")); err == nil && n > 0 {
			fs = append(fs, rf{n, m})
		}
	}
	sort.Slice(fs, func(i, j int) bool { return fs[i].n > fs[j].n })
	out := make([]string, 0, len(fs))
	for _, f := range fs {
		out = append(out, f.path)
	}
	return out
}

// flushWriter flushes after every write batch (Flush is explicit).
type flushWriter struct {
	w  io.Writer
	rc *http.ResponseController
}

func newFlushWriter(w http.ResponseWriter) *flushWriter {
	return &flushWriter{w: w, rc: http.NewResponseController(w)}
}

func (f *flushWriter) Write(p []byte) (int, error) { return f.w.Write(p) }
func (f *flushWriter) Flush()                      { _ = f.rc.Flush() }

// logTail writes a container's log (rotated files, then the current one)
// and, when following, the lines appended later.
type logTail struct {
	path    string
	opts    logOptions
	poll    time.Duration
	running func(context.Context) bool
	out     *flushWriter

	lw      *lineWriter
	ring    *tailRing
	join    joiner
	pending []byte // an unterminated last line of the current file
}

func (t *logTail) emit(l logLine) error {
	if t.ring != nil {
		t.ring.add(l)
		return nil
	}
	return t.lw.write(l)
}

func (t *logTail) run(ctx context.Context) error {
	limit := int64(-1)
	if t.opts.limitBytes > 0 {
		limit = t.opts.limitBytes
	}
	t.lw = &lineWriter{w: t.out, timestamps: t.opts.timestamps, since: t.opts.since, remaining: limit}
	if t.opts.tail >= 0 {
		t.ring = &tailRing{n: t.opts.tail}
	}
	var files []string
	if !t.opts.previous {
		files = rotatedFiles(t.path)
	}
	for _, p := range files {
		if err := t.readWhole(p); err != nil {
			return err
		}
	}
	f, err := os.Open(t.path)
	if err != nil {
		return fmt.Errorf("open container log: %w", err)
	}
	defer func() { f.Close() }()
	rd := bufio.NewReader(f)
	if err := t.drain(rd); err != nil {
		return err
	}
	if !t.opts.follow {
		if err := t.flushPartial(); err != nil {
			return err
		}
	}
	if t.ring != nil {
		if err := t.ring.each(t.lw.write); err != nil {
			return err
		}
		t.ring = nil
	}
	t.out.Flush()
	if !t.opts.follow {
		return nil
	}
	return t.follow(ctx, &f, &rd)
}

func (t *logTail) readWhole(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return nil // rotated away meanwhile
	}
	defer f.Close()
	err = t.drain(bufio.NewReader(f))
	t.pending = nil
	return err
}

// flushPartial emits the lines the log ends inside of (the output of a
// process that exited without a final newline), unterminated.
func (t *logTail) flushPartial() error {
	for _, l := range t.join.flush() {
		if err := t.emit(l); err != nil {
			return err
		}
	}
	return nil
}

// drain emits every complete line up to EOF, keeping a trailing partial line.
func (t *logTail) drain(rd *bufio.Reader) error {
	for {
		b, err := rd.ReadBytes('\n')
		if len(b) > 0 {
			t.pending = append(t.pending, b...)
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("read container log: %w", err)
		}
		line := t.pending
		t.pending = nil
		e, perr := parseCRILine(line)
		if perr != nil {
			continue // skip a damaged line, as the kubelet does
		}
		if l, ok := t.join.add(e); ok {
			if err := t.emit(l); err != nil {
				return err
			}
		}
	}
}

// follow polls the open file for new lines, switches to the new file after a
// rotation and ends once the container is no longer running.
func (t *logTail) follow(ctx context.Context, f **os.File, rd **bufio.Reader) error {
	timer := time.NewTimer(t.poll)
	defer timer.Stop()
	exitedPolls := 0
	for {
		alive := t.running(ctx)
		if !alive {
			exitedPolls++ // one more poll after the exit lets the log copier finish
		}
		if err := t.drain(*rd); err != nil {
			return err
		}
		if rotated(t.path, *f) {
			nf, err := os.Open(t.path)
			if err == nil {
				(*f).Close()
				*f, *rd, t.pending = nf, bufio.NewReader(nf), nil
				continue
			}
		}
		if exitedPolls > 1 {
			err := t.flushPartial()
			t.out.Flush()
			return err
		}
		t.out.Flush()
		timer.Reset(t.poll)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-timer.C:
		}
	}
}

// rotated is true when path now names another file than f.
func rotated(path string, f *os.File) bool {
	cur, err := os.Stat(path)
	if err != nil {
		return false
	}
	open, err := f.Stat()
	return err == nil && !os.SameFile(cur, open)
}
