package scheduler

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
)

// Harness schedules pods one after another against a Snapshot, binding
// each through a Binder and then assuming the pod onto its node, the way
// the server loop will (nomad's scheduler/tests Harness). Tests and
// benchmarks drive it with fake nodes and a RecordingBinder.
type Harness struct {
	Snapshot *Snapshot
	Binder   Binder
	Config   Config
}

// NewHarness returns a Harness over nodes and pods with a RecordingBinder.
func NewHarness(nodes []*corev1.Node, pods []*corev1.Pod, cfg Config) *Harness {
	return &Harness{Snapshot: NewSnapshot(nodes, pods), Binder: &RecordingBinder{}, Config: cfg}
}

// ScheduleAndBind schedules pod, binds it and updates the snapshot.
func (h *Harness) ScheduleAndBind(pod *corev1.Pod) (Result, error) {
	res, err := Schedule(pod, h.Snapshot, h.Config)
	if err != nil {
		return res, err
	}
	key := pod.Namespace + "/" + pod.Name
	if err := h.Binder.Bind(key, res.Node); err != nil {
		return res, fmt.Errorf("bind %s: %w", key, err)
	}
	if err := h.Snapshot.AssumePod(pod, res.Node); err != nil {
		return res, err
	}
	return res, nil
}
