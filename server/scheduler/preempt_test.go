package scheduler

import (
	"errors"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/utils/ptr"
)

func startedAt(sec int64) podOpt {
	return func(p *corev1.Pod) { p.Status.StartTime = ptr.To(metav1.Unix(sec, 0)) }
}

func TestPreempt(t *testing.T) {
	twoNodes := func() []*corev1.Node { return fakeNodes(2, "2", "8Gi") }
	low := func(name, node string, prio int32, opts ...podOpt) *corev1.Pod {
		return makePod(name, "1500m", "", append([]podOpt{onNode(node), withPriority(prio), podLabels("app", name)}, opts...)...)
	}
	pdbFor := func(app string, allowed int32) PDB {
		return PDB{Namespace: "default", Selector: labels.SelectorFromSet(labels.Set{"app": app}), DisruptionsAllowed: allowed}
	}
	tests := []struct {
		name     string
		nodes    []*corev1.Node
		existing []*corev1.Pod
		pdbs     []PDB
		pod      *corev1.Pod
		node     string
		victims  []string
		msg      string // full FitError message
	}{
		{"lowest priority victim", twoNodes(), []*corev1.Pod{low("a", "node-00000", 5), low("b", "node-00001", 1)}, nil,
			makePod("hi", "1", "", withPriority(100)), "node-00001", []string{"b"},
			"0/2 nodes are available: 2 Insufficient cpu. preemption: found a potential placement for pod on node node-00001, preempting 1 victims"},
		{"PDB protects the cheaper victim", twoNodes(), []*corev1.Pod{low("a", "node-00000", 5), low("b", "node-00001", 1)},
			[]PDB{pdbFor("b", 0)}, makePod("hi", "1", "", withPriority(100)), "node-00000", []string{"a"}, ""},
		{"PDB with disruptions left does not protect", twoNodes(), []*corev1.Pod{low("a", "node-00000", 5), low("b", "node-00001", 1)},
			[]PDB{pdbFor("b", 1)}, makePod("hi", "1", "", withPriority(100)), "node-00001", []string{"b"}, ""},
		{"fewest victims", twoNodes(), []*corev1.Pod{
			low("a", "node-00000", 1), makePod("s1", "700m", "", onNode("node-00001"), withPriority(1)),
			makePod("s2", "700m", "", onNode("node-00001"), withPriority(1))}, nil,
			makePod("hi", "1500m", "", withPriority(100)), "node-00000", []string{"a"}, ""},
		{"reprieve what is not needed", fakeNodes(1, "2", "8Gi"), []*corev1.Pod{
			makePod("old", "500m", "", onNode("node-00000"), withPriority(1), startedAt(1)),
			makePod("new", "500m", "", onNode("node-00000"), withPriority(1), startedAt(2)),
			makePod("big", "1", "", onNode("node-00000"), withPriority(1), startedAt(3))}, nil,
			makePod("hi", "1", "", withPriority(100)), "node-00000", []string{"big"}, ""},
		{"latest started top victim", twoNodes(), []*corev1.Pod{low("a", "node-00000", 1, startedAt(10)), low("b", "node-00001", 1, startedAt(20))}, nil,
			makePod("hi", "1", "", withPriority(100)), "node-00001", []string{"b"}, ""},
		{"equal priority is never a victim", twoNodes(), []*corev1.Pod{low("a", "node-00000", 100), low("b", "node-00001", 100)}, nil,
			makePod("hi", "1", "", withPriority(100)), "", nil,
			"0/2 nodes are available: 2 Insufficient cpu. preemption: 0/2 nodes are available: 2 " + ReasonNoVictims + "."},
		{"too big even for empty nodes", twoNodes(), []*corev1.Pod{low("a", "node-00000", 1)}, nil,
			makePod("huge", "4", "", withPriority(100)), "", nil,
			"0/2 nodes are available: 2 Insufficient cpu. preemption: 0/2 nodes are available: 2 " + ReasonNoVictims + "."},
		{"preemptionPolicy Never", twoNodes(), []*corev1.Pod{low("a", "node-00000", 1), low("b", "node-00001", 1)}, nil,
			makePod("hi", "1", "", withPriority(100), func(p *corev1.Pod) { p.Spec.PreemptionPolicy = ptr.To(corev1.PreemptNever) }), "", nil,
			"0/2 nodes are available: 2 Insufficient cpu. preemption: " + MsgPreemptionNever},
		{"tainted nodes are not helpful", []*corev1.Node{makeNode("t", "2", "8Gi", withTaint("node.kubernetes.io/not-ready", "", corev1.TaintEffectNoSchedule)),
			makeNode("u", "2", "8Gi")}, []*corev1.Pod{low("a", "u", 1), low("b", "t", 1)}, nil,
			makePod("hi", "1", "", withPriority(100)), "u", []string{"a"},
			"0/2 nodes are available: 1 Insufficient cpu, 1 node(s) had untolerated taint(s). preemption: found a potential placement for pod on node u, preempting 1 victims"},
		{"anti-affinity victim", fakeNodes(1, "4", "8Gi"), []*corev1.Pod{makePod("e", "", "", onNode("node-00000"), withPriority(1), podLabels("app", "x"))}, nil,
			makePod("hi", "", "", withPriority(100), requiredAnti(podTerm(LabelHostname, "app", "x"))), "node-00000", []string{"e"},
			"0/1 nodes are available: 1 " + ReasonPodAntiAffinity + ". preemption: found a potential placement for pod on node node-00000, preempting 1 victims"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			snap := NewSnapshot(tc.nodes, tc.existing)
			_, err := Schedule(tc.pod, snap, Config{})
			var fe *FitError
			if !errors.As(err, &fe) {
				t.Fatalf("schedule: %v", err)
			}
			p := Preempt(tc.pod, snap, fe, tc.pdbs)
			var node string
			var victims []string
			if p != nil {
				node = p.Node
				for _, v := range p.Victims {
					victims = append(victims, v.Name)
				}
			}
			if node != tc.node || len(victims) != len(tc.victims) || (len(victims) > 0 && victims[0] != tc.victims[0]) {
				t.Fatalf("got %q %v, want %q %v (%s)", node, victims, tc.node, tc.victims, fe.Error())
			}
			if tc.msg != "" && fe.Error() != tc.msg {
				t.Fatalf("message\ngot  %s\nwant %s", fe.Error(), tc.msg)
			}
		})
	}
}

func TestPreemptWaitsForTerminatingVictims(t *testing.T) {
	now := metav1.NewTime(time.Unix(100, 0))
	victim := makePod("v", "1500m", "", onNode("node-00000"), withPriority(1), func(p *corev1.Pod) { p.DeletionTimestamp = &now })
	snap := NewSnapshot(fakeNodes(1, "2", "8Gi"), []*corev1.Pod{victim})
	pod := makePod("hi", "1", "", withPriority(100), func(p *corev1.Pod) { p.Status.NominatedNodeName = "node-00000" })
	_, err := Schedule(pod, snap, Config{})
	var fe *FitError
	if !errors.As(err, &fe) {
		t.Fatal(err)
	}
	if p := Preempt(pod, snap, fe, nil); p != nil || fe.PostFilterMsg != "preemption: "+MsgPreemptionTerminating {
		t.Fatalf("got %+v %q", p, fe.PostFilterMsg)
	}
}

func TestHarnessPreemption(t *testing.T) {
	h := NewHarness(fakeNodes(1, "2", "8Gi"), nil, Config{})
	if _, err := h.ScheduleAndBind(makePod("low", "1500m", "", withPriority(0))); err != nil {
		t.Fatal(err)
	}
	res, nominated, err := h.ScheduleOrPreempt(makePod("high", "1", "", withPriority(1000)))
	if err != nil || res.Node != "node-00000" || nominated != "node-00000" || len(h.Evicted) != 1 || h.Evicted[0].Name != "low" {
		t.Fatalf("got %+v nominated %q evicted %d: %v", res, nominated, len(h.Evicted), err)
	}
}

// Node lifecycle taints (added from conditions) keep pods off a node
// unless tolerated; the message is v1.37's.
func TestConditionTaints(t *testing.T) {
	for _, key := range []string{"node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable", "node.kubernetes.io/memory-pressure",
		"node.kubernetes.io/disk-pressure", "node.kubernetes.io/pid-pressure", "node.kubernetes.io/network-unavailable",
		TaintNodeUnschedulable} {
		t.Run(key, func(t *testing.T) {
			snap := NewSnapshot([]*corev1.Node{makeNode("n", "2", "8Gi", withTaint(key, "", corev1.TaintEffectNoSchedule))}, nil)
			_, err := Schedule(makePod("p", "", ""), snap, Config{})
			if want := "0/1 nodes are available: 1 " + ReasonUntoleratedTaint + "."; err == nil || err.Error() != want {
				t.Fatalf("got %v, want %s", err, want)
			}
			tol := withToleration(corev1.Toleration{Key: key, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule})
			if _, err := Schedule(makePod("p", "", "", tol), snap, Config{}); err != nil {
				t.Fatalf("tolerating pod: %v", err)
			}
		})
	}
}
