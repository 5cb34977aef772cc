package kubeletapi

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"
	"time"
)

// logLine is one full line of a container's output (partial CRI entries joined).
type logLine struct {
	ts  time.Time
	msg []byte // without the trailing newline
	// unterminated: the stream ended inside this line (its last entry was
	// partial); it is written without a newline, as the kubelet does.
	unterminated bool
}

// criEntry is one line of a CRI log file:
//
//	2024-01-01T00:00:00.000000000Z stdout F hello
type criEntry struct {
	ts      time.Time
	stream  string
	partial bool
	msg     []byte
}

func parseCRILine(line []byte) (criEntry, error) {
	line = bytes.TrimSuffix(line, []byte("\n"))
	fields := bytes.SplitN(line, []byte(" "), 4)
	if len(fields) < 3 {
		return criEntry{}, fmt.Errorf("malformed CRI log line %q", line)
	}
	ts, err := time.Parse(time.RFC3339Nano, string(fields[0]))
	if err != nil {
		return criEntry{}, fmt.Errorf("CRI log timestamp: %w", err)
	}
	e := criEntry{ts: ts, stream: string(fields[1])}
	if e.stream != "stdout" && e.stream != "stderr" {
		return criEntry{}, fmt.Errorf("CRI log stream %q", e.stream)
	}
	switch string(fields[2]) {
	case "P":
		e.partial = true
	case "F":
	default:
		return criEntry{}, fmt.Errorf("CRI log tag %q", fields[2])
	}
	if len(fields) == 4 {
		e.msg = fields[3]
	}
	return e, nil
}

// joiner merges partial entries into lines, per stream.
type joiner struct {
	pending map[string]*logLine
}

// add returns the full line an entry completes, if any.
func (j *joiner) add(e criEntry) (logLine, bool) {
	if j.pending == nil {
		j.pending = map[string]*logLine{}
	}
	p := j.pending[e.stream]
	if p == nil && !e.partial {
		return logLine{ts: e.ts, msg: append([]byte(nil), e.msg...)}, true
	}
	if p == nil {
		p = &logLine{ts: e.ts}
		j.pending[e.stream] = p
	}
	p.msg = append(p.msg, e.msg...)
	if e.partial {
		return logLine{}, false
	}
	delete(j.pending, e.stream)
	return *p, true
}

// flush returns the lines still waiting for their end, oldest first, and
// forgets them: the log ended there.
func (j *joiner) flush() []logLine {
	var out []logLine
	for _, p := range j.pending {
		l := *p
		l.unterminated = true
		out = append(out, l)
	}
	j.pending = nil
	slices.SortFunc(out, func(a, b logLine) int { return a.ts.Compare(b.ts) })
	return out
}

// errLimit ends a log stream at limitBytes.
var errLimit = errors.New("log limit reached")

// lineWriter writes lines with the requested timestamps and byte limit.
type lineWriter struct {
	w          io.Writer
	timestamps bool
	since      time.Time
	remaining  int64 // <0 = unlimited
}

func (lw *lineWriter) write(l logLine) error {
	if !lw.since.IsZero() && l.ts.Before(lw.since) {
		return nil
	}
	var b []byte
	if lw.timestamps {
		b = append(b, l.ts.UTC().Format(time.RFC3339Nano)...)
		b = append(b, ' ')
	}
	b = append(b, l.msg...)
	if !l.unterminated {
		b = append(b, '\n')
	}
	if lw.remaining >= 0 && int64(len(b)) >= lw.remaining {
		_, err := lw.w.Write(b[:lw.remaining])
		lw.remaining = 0
		if err != nil {
			return err
		}
		return errLimit
	}
	if lw.remaining >= 0 {
		lw.remaining -= int64(len(b))
	}
	_, err := lw.w.Write(b)
	return err
}

// tailRing keeps the last n lines.
type tailRing struct {
	n     int64
	lines []logLine
	next  int
}

func (t *tailRing) add(l logLine) {
	if t.n == 0 {
		return
	}
	if int64(len(t.lines)) < t.n {
		t.lines = append(t.lines, l)
		return
	}
	t.lines[t.next] = l
	t.next = (t.next + 1) % len(t.lines)
}

func (t *tailRing) each(f func(logLine) error) error {
	for i := range t.lines {
		if err := f(t.lines[(t.next+i)%len(t.lines)]); err != nil {
			return err
		}
	}
	return nil
}
