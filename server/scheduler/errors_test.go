package scheduler

import (
	"errors"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

func TestFitErrorMessage(t *testing.T) {
	tests := []struct {
		name    string
		reasons map[string][]string
		total   int
		want    string
	}{
		{"issue example", map[string][]string{
			"a": {ReasonInsufficientCPU}, "b": {ReasonNodeAffinity}, "c": {ReasonNodeAffinity},
		}, 3, "0/3 nodes are available: 1 Insufficient cpu, 2 node(s) didn't match Pod's node affinity/selector."},
		{"several reasons per node counted each", map[string][]string{
			"a": {ReasonInsufficientCPU, ReasonInsufficientMem}, "b": {ReasonInsufficientMem},
		}, 2, "0/2 nodes are available: 1 Insufficient cpu, 2 Insufficient memory."},
		{"no reasons", nil, 0, "0/0 nodes are available."},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := error(&FitError{NumAllNodes: tc.total, NodeReasons: tc.reasons})
			if err.Error() != tc.want {
				t.Fatalf("got  %q\nwant %q", err.Error(), tc.want)
			}
			if !errors.Is(err, ErrUnschedulable) {
				t.Fatal("FitError is not ErrUnschedulable")
			}
		})
	}
}

func TestScheduleErrors(t *testing.T) {
	_, err := Schedule(makePod("p", "", ""), NewSnapshot(nil, nil), Config{})
	if !errors.Is(err, ErrNoNodes) {
		t.Fatalf("empty snapshot: %v", err)
	}
	nodes := []*corev1.Node{
		makeNode("a", "1", "1Gi", cordoned()),
		makeNode("b", "1", "1Gi", withTaint("k", "v", corev1.TaintEffectNoSchedule)),
		makeNode("c", "1", "1Gi"),
	}
	_, err = Schedule(makePod("p", "2", ""), NewSnapshot(nodes, nil), Config{})
	var fe *FitError
	if !errors.As(err, &fe) {
		t.Fatalf("want *FitError, got %v", err)
	}
	want := "0/3 nodes are available: 1 Insufficient cpu, 1 node(s) had untolerated taint(s), 1 node(s) were unschedulable."
	if err.Error() != want {
		t.Fatalf("got  %q\nwant %q", err.Error(), want)
	}
	if got := fe.NodeReasons["a"]; len(got) != 1 || got[0] != ReasonUnschedulable {
		t.Fatalf("node a reasons %q", got)
	}
}
