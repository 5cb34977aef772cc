package runtime

import (
	"testing"

	tasktypes "github.com/containerd/containerd/api/types/task"
	containerd "github.com/containerd/containerd/v2/client"
)

func TestProcessStatusMatchesTheClient(t *testing.T) {
	for in, want := range map[tasktypes.Status]containerd.ProcessStatus{
		tasktypes.Status_CREATED: containerd.Created, tasktypes.Status_RUNNING: containerd.Running,
		tasktypes.Status_STOPPED: containerd.Stopped, tasktypes.Status_PAUSED: containerd.Paused,
		tasktypes.Status_PAUSING: containerd.Pausing, tasktypes.Status_UNKNOWN: containerd.Unknown,
	} {
		if got := processStatus(in); got != want {
			t.Errorf("processStatus(%v) = %q, want %q", in, got, want)
		}
	}
}
