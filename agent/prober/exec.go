package prober

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/orch/orch/agent/runtime"
)

// errNoExec is returned when an exec probe or hook runs without Deps.Exec.
var errNoExec = errors.New("exec is not configured")

// probeExec runs the command in the container: exit 0 is success, another
// exit code or the timeout failure, an error running it an error (kubelet
// throws such a result away and records "probe errored").
func probeExec(ctx context.Context, exec ExecFunc, containerID string, cmd []string, timeout time.Duration) (outcome, string, error) {
	if exec == nil {
		return outFailure, "", errNoExec
	}
	code, out, err := exec(ctx, containerID, cmd)
	if timedOut(ctx) {
		return outFailure, fmt.Sprintf("command timed out: %q timed out after %s", strings.Join(cmd, " "), timeout), nil
	}
	if err != nil {
		return outFailure, "", fmt.Errorf("exec %q: %w", strings.Join(cmd, " "), err)
	}
	if len(out) > maxOutput {
		out = out[:maxOutput]
	}
	if code != 0 {
		return outFailure, string(out), nil
	}
	return outSuccess, string(out), nil
}

// ExecFromRuntime adapts a container runtime to ExecFunc: stdout and stderr
// are collected together (the first 10 KiB).
func ExecFromRuntime(rt runtime.Interface) ExecFunc {
	return func(ctx context.Context, containerID string, cmd []string) (int, []byte, error) {
		var buf limitedBuffer
		code, err := rt.Exec(ctx, containerID, runtime.ExecRequest{Cmd: cmd, Stdout: &buf, Stderr: &buf})
		return code, buf.Bytes(), err
	}
}

// limitedBuffer keeps the first maxOutput bytes written to it, from any
// goroutine, and swallows the rest.
type limitedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *limitedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if room := maxOutput - b.buf.Len(); room > 0 {
		if len(p) > room {
			b.buf.Write(p[:room])
		} else {
			b.buf.Write(p)
		}
	}
	return len(p), nil
}

func (b *limitedBuffer) Bytes() []byte {
	b.mu.Lock()
	defer b.mu.Unlock()
	return bytes.Clone(b.buf.Bytes())
}
