package prober

import (
	"context"
	"fmt"
	"time"

	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
)

// Kind is the kind of a probe.
type Kind int

const (
	Liveness Kind = iota
	Readiness
	Startup
	numKinds
)

// String is the name kubelet uses in events ("Liveness probe failed: ...").
func (k Kind) String() string {
	switch k {
	case Liveness:
		return "Liveness"
	case Readiness:
		return "Readiness"
	case Startup:
		return "Startup"
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

// Result is the outcome of a probe after thresholds.
type Result int

const (
	Unknown Result = iota
	Success
	Failure
)

func (r Result) String() string {
	switch r {
	case Success:
		return "Success"
	case Failure:
		return "Failure"
	}
	return "Unknown"
}

// Update reports a changed result of one probe of one container.
type Update struct {
	PodUID      types.UID
	Container   string
	ContainerID string
	Probe       Kind
	Result      Result
	// Message is the last probe's output (the failure reason for a Failure).
	Message string
}

// Event types and reasons, as kubelet records them.
const (
	EventTypeNormal  = "Normal"
	EventTypeWarning = "Warning"

	ReasonUnhealthy    = "Unhealthy"
	ReasonProbeWarning = "ProbeWarning"
	ReasonKilling      = "Killing"
)

// Recorder records events about a pod. client-go's record.EventRecorder
// satisfies it.
type Recorder interface {
	Eventf(object k8sruntime.Object, eventtype, reason, messageFmt string, args ...interface{})
}

// ExecFunc runs cmd in the running container containerID and returns its exit
// code and combined output. It must return when ctx ends.
// ExecFromRuntime adapts agent/runtime.Interface to it.
type ExecFunc func(ctx context.Context, containerID string, cmd []string) (exitCode int, output []byte, err error)

// Clock is the time seam: clock.RealClock{} in production, a
// k8s.io/utils/clock/testing.FakeClock in tests.
type Clock = clock.WithDelayedExecution

// Deps are the Manager's collaborators.
type Deps struct {
	// Exec runs exec probes; without it exec probes fail with an error.
	Exec ExecFunc
	// Recorder gets the Unhealthy/ProbeWarning events; nil drops them.
	Recorder Recorder
	// Clock defaults to the real clock.
	Clock Clock
	// Metrics, when set, counts every probe run (prober_probe_total).
	Metrics *Metrics
}

// Time-related defaults of a probe, as the API server defaults them; applied
// again here so a pod that skipped defaulting still probes sanely.
const (
	defaultPeriod    = 10 * time.Second
	defaultTimeout   = 1 * time.Second
	defaultThreshold = 3
	maxOutput        = 10 * 1024 // bytes of output kept, as kubelet
	maxRetries       = 3         // attempts of a probe that errors, as kubelet
)

// KillMessage is kubelet's "Killing" event text for a liveness or startup
// failure: "Container web failed liveness probe, will be restarted" (without
// ", will be restarted" when restartPolicy does not restart it).
func KillMessage(container string, k Kind, restart bool) string {
	kind := "liveness"
	if k == Startup {
		kind = "startup"
	}
	msg := fmt.Sprintf("Container %s failed %s probe", container, kind)
	if restart {
		msg += ", will be restarted"
	}
	return msg
}

type nopRecorder struct{}

func (nopRecorder) Eventf(k8sruntime.Object, string, string, string, ...interface{}) {}
