package prober

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// outcome is one probe's raw outcome, before thresholds.
type outcome int

const (
	outSuccess outcome = iota
	outWarning         // success, with an event (e.g. a redirect not followed)
	outFailure
)

// errTimeout is the cause of a probe context that hit timeoutSeconds.
var errTimeout = errors.New("probe timed out")

// ErrNoHandler is returned for a probe or hook without any handler set.
var ErrNoHandler = errors.New("no handler set")

// ResolvePort turns a probe or hook port (number or name of one of the
// container's ports) into a port number, as kubelet does.
func ResolvePort(port intstr.IntOrString, c *v1.Container) (int, error) {
	n := 0
	switch port.Type {
	case intstr.Int:
		n = port.IntValue()
	case intstr.String:
		name := port.StrVal
		for _, p := range c.Ports {
			if p.Name == name {
				n = int(p.ContainerPort)
				break
			}
		}
		if n == 0 {
			// kubelet also accepts a number written as a string
			v, err := strconv.Atoi(name)
			if err != nil {
				return 0, fmt.Errorf("couldn't find port: %s in container %q", name, c.Name)
			}
			n = v
		}
	}
	if n <= 0 || n > 65535 {
		return 0, fmt.Errorf("invalid port number: %v", n)
	}
	return n, nil
}

// withClockTimeout is context.WithTimeout on the clock seam, so tests can
// time probes out by stepping a fake clock. The cause of a timeout is
// errTimeout.
func withClockTimeout(ctx context.Context, clk Clock, d time.Duration) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancelCause(ctx)
	t := clk.AfterFunc(d, func() { cancel(errTimeout) })
	return ctx, func() {
		t.Stop()
		cancel(context.Canceled)
	}
}

// timedOut says whether ctx ended because its probe timeout passed.
func timedOut(ctx context.Context) bool {
	return errors.Is(context.Cause(ctx), errTimeout)
}

// probeTimeout is the probe's timeoutSeconds, defaulted.
func probeTimeout(p *v1.Probe) time.Duration {
	if p.TimeoutSeconds <= 0 {
		return defaultTimeout
	}
	return time.Duration(p.TimeoutSeconds) * time.Second
}

// errNoHost is returned when a handler has no host and the pod no IP yet;
// probing "" would reach the node's own loopback.
var errNoHost = errors.New("no host given and the pod has no IP")

// hostOr is host, or the pod IP when host is empty.
func hostOr(host, podIP string) (string, error) {
	if host != "" {
		return host, nil
	}
	if podIP == "" {
		return "", errNoHost
	}
	return podIP, nil
}
