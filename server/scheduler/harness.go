package scheduler

import (
	"errors"
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
	// PDBs are the PodDisruptionBudgets preemption respects.
	PDBs []PDB
	// Evicted records the victims of preemption, in order.
	Evicted []*corev1.Pod
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

// ScheduleOrPreempt is ScheduleAndBind; a pod that fits nowhere may
// preempt: the victims are evicted from the snapshot (recorded in
// Evicted) and the pod is scheduled again, as the server loop retries it
// once the victims are gone. It returns the nominated node, if any.
func (h *Harness) ScheduleOrPreempt(pod *corev1.Pod) (Result, string, error) {
	res, err := h.ScheduleAndBind(pod)
	var fe *FitError
	if !errors.As(err, &fe) {
		return res, "", err
	}
	pre := Preempt(pod, h.Snapshot, fe, h.PDBs)
	if pre == nil {
		return res, "", fe
	}
	for _, v := range pre.Victims {
		h.Snapshot.RemovePod(v)
		h.Evicted = append(h.Evicted, v)
	}
	res, err = h.ScheduleAndBind(pod)
	return res, pre.Node, err
}
