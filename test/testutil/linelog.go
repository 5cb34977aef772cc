package testutil

import (
	"bytes"
	"strings"
	"sync"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
)

const tailLines = 200

// lineLog is an io.Writer that logs each complete line with t.Log and keeps
// the last lines for failure messages. After close it only keeps lines, so a
// late write never calls t.Log after the test ended.
type lineLog struct {
	t       testing.TB
	quiet   bool
	keepAll bool

	mu     sync.Mutex
	buf    bytes.Buffer
	lines  []string
	closed bool
}

func newLineLog(t testing.TB, quiet, keepAll bool) *lineLog {
	return &lineLog{t: t, quiet: quiet, keepAll: keepAll}
}

func (l *lineLog) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf.Write(b)
	for {
		i := bytes.IndexByte(l.buf.Bytes(), '\n')
		if i < 0 {
			break
		}
		line := string(l.buf.Next(i + 1))
		l.emit(strings.TrimRight(line, "\r\n"))
	}
	return len(b), nil
}

func (l *lineLog) emit(line string) {
	l.lines = append(l.lines, line)
	if !l.keepAll && len(l.lines) > tailLines {
		l.lines = l.lines[len(l.lines)-tailLines:]
	}
	if !l.closed && !l.quiet {
		l.t.Log("orch: " + line)
	}
}

func (l *lineLog) close() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.buf.Len() > 0 {
		l.emit(l.buf.String())
		l.buf.Reset()
	}
	l.closed = true
}

func (l *lineLog) tail() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.lines, "\n")
}

// withCodec gives a config the settings an unversioned REST client needs.
func withCodec(c *rest.Config) *rest.Config {
	c.NegotiatedSerializer = serializer.WithoutConversionCodecFactory{CodecFactory: scheme.Codecs}
	if c.UserAgent == "" {
		c.UserAgent = rest.DefaultKubernetesUserAgent()
	}
	return c
}
