package runtime

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// Container logs: the agent copies the container's stdout/stderr (FIFOs fed
// by the shim) into a file in the CRI log format, one line per entry:
//
//	2024-01-01T00:00:00.000000000Z stdout F hello
//
// F marks a full line, P a partial one (a line longer than maxLineSize is
// split into P entries ended by an F). The file is rotated at maxSize:
// <path> → <path>.1 → ... → <path>.<maxFiles-1>.
//
// Choice: FIFOs read in-process (as containerd's CRI plugin does) rather
// than a logging binary per container, so no extra process per container.
// The FIFOs live in the containerd state dir (/run), so after an agent
// restart the runtime reattaches to every running task (Containerd.Recover)
// and logs keep flowing; while no agent reads, the shim holds the output and
// the container blocks once the pipe buffer (64 KiB) is full.

const (
	maxLineSize     = 16 * 1024
	DefaultLogSize  = 10 * 1024 * 1024
	DefaultLogFiles = 3
)

// logFile is one container's rotating CRI log, shared by its streams.
type logFile struct {
	mu       sync.Mutex
	path     string
	f        *os.File
	size     int64
	maxSize  int64
	maxFiles int
	refs     int
}

func openLogFile(path string, maxSize int64, maxFiles int) (*logFile, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("create log dir: %w", err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o640)
	if err != nil {
		return nil, fmt.Errorf("open container log: %w", err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	return &logFile{path: path, f: f, size: st.Size(), maxSize: maxSize, maxFiles: maxFiles}, nil
}

func (l *logFile) writeEntry(stream string, partial bool, line []byte) {
	tag := "F"
	if partial {
		tag = "P"
	}
	var b bytes.Buffer
	b.Grow(len(line) + 48)
	b.WriteString(time.Now().UTC().Format(time.RFC3339Nano))
	b.WriteByte(' ')
	b.WriteString(stream)
	b.WriteByte(' ')
	b.WriteString(tag)
	b.WriteByte(' ')
	b.Write(line)
	b.WriteByte('\n')
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return
	}
	if l.maxSize > 0 && l.size > 0 && l.size+int64(b.Len()) > l.maxSize {
		l.rotate()
	}
	n, _ := l.f.Write(b.Bytes())
	l.size += int64(n)
}

// rotate shifts <path>.i to <path>.i+1, drops the oldest and reopens path.
func (l *logFile) rotate() {
	l.f.Close()
	for i := l.maxFiles - 1; i >= 1; i-- {
		src := l.path
		if i > 1 {
			src = fmt.Sprintf("%s.%d", l.path, i-1)
		}
		_ = os.Rename(src, fmt.Sprintf("%s.%d", l.path, i))
	}
	if l.maxFiles <= 1 {
		_ = os.Remove(l.path)
	}
	f, err := os.OpenFile(l.path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o640)
	if err != nil {
		l.f = nil
		return
	}
	l.f, l.size = f, 0
}

func (l *logFile) close() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.refs--
	if l.refs <= 0 && l.f != nil {
		l.f.Close()
		l.f = nil
	}
}

// streamWriter turns one stream's bytes into CRI log entries.
type streamWriter struct {
	file   *logFile
	stream string
	buf    []byte
}

func (l *logFile) stream(name string) *streamWriter {
	l.mu.Lock()
	l.refs++
	l.mu.Unlock()
	return &streamWriter{file: l, stream: name}
}

func (w *streamWriter) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			w.buf = append(w.buf, p...)
			for len(w.buf) >= maxLineSize {
				w.file.writeEntry(w.stream, true, w.buf[:maxLineSize])
				w.buf = append(w.buf[:0], w.buf[maxLineSize:]...)
			}
			break
		}
		line := p[:i]
		if len(w.buf) > 0 {
			line = append(w.buf, line...)
		}
		for len(line) > maxLineSize {
			w.file.writeEntry(w.stream, true, line[:maxLineSize])
			line = line[maxLineSize:]
		}
		w.file.writeEntry(w.stream, false, line)
		w.buf = w.buf[:0]
		p = p[i+1:]
	}
	return n, nil
}

// Close flushes a last unterminated line as a partial entry, as
// containerd's CRI does: readers then add no newline it never had
// (`echo -n DONE` logs, and a FallbackToLogsOnError message, are "DONE").
func (w *streamWriter) Close() error {
	if len(w.buf) > 0 {
		w.file.writeEntry(w.stream, true, w.buf)
		w.buf = nil
	}
	w.file.close()
	return nil
}
