package scheduler

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// Snapshots over shared NodeInfos never change them: assumed and removed
// pods go to per-snapshot copies.
func TestSnapshotFromInfosCopiesOnWrite(t *testing.T) {
	e := makePod("e", "1", "", onNode("n"), podLabels("app", "x"), requiredAnti(podTerm(LabelHostname, "app", "x")))
	ni := NewNodeInfo(makeNode("n", "4", "8Gi"), []*corev1.Pod{e, makePod("done", "1", "", onNode("n"),
		func(p *corev1.Pod) { p.Status.Phase = corev1.PodSucceeded })})
	if len(ni.Pods) != 1 || ni.Requested.MilliCPU != 1000 {
		t.Fatalf("NodeInfo %d pods, %dm cpu; want the finished pod left out", len(ni.Pods), ni.Requested.MilliCPU)
	}
	a := NewSnapshotFromInfos([]*NodeInfo{ni})
	if err := a.AssumePod(makePod("p", "1", ""), "n"); err != nil {
		t.Fatal(err)
	}
	a.RemovePod(e)
	if a.NodeInfo("n") == ni || len(a.NodeInfo("n").Pods) != 1 || a.NodeInfo("n").Pods[0].Name != "p" || a.affinityPods != 0 {
		t.Fatalf("snapshot view wrong: %+v", a.NodeInfo("n").Pods)
	}
	if len(ni.Pods) != 1 || ni.Pods[0].Name != "e" || ni.Requested.MilliCPU != 1000 {
		t.Fatal("shared NodeInfo changed")
	}
	b := NewSnapshotFromInfos([]*NodeInfo{ni})
	if b.affinityPods != 1 || b.NodeInfo("n") != ni {
		t.Fatal("second snapshot does not see the shared NodeInfo")
	}
}
