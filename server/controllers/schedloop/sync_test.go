package schedloop

import (
	"context"
	"errors"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/utils/ptr"
)

func TestScheduleOne(t *testing.T) {
	tests := []struct {
		name      string
		pod       *corev1.Pod
		wantNode  string // "" = no binding
		wantFit   string // FitError message, "" = none
		wantEvent string
	}{
		{name: "fits the emptier node", pod: pod("small", "500m"), wantNode: "n2",
			wantEvent: "Successfully assigned default/small to n2"},
		{name: "too big", pod: pod("big", "8"), wantFit: "0/2 nodes are available: 2 Insufficient cpu. preemption: 0/2 nodes are available: 2 No preemption victims found for incoming pod."},
		{name: "other scheduler", pod: func() *corev1.Pod { p := pod("other", "100m"); p.Spec.SchedulerName = "x"; return p }()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			busy := pod("busy", "1500m")
			busy.Spec.NodeName = "n1"
			client := fake.NewClientset(node("n1", "2"), node("n2", "2"), busy, tt.pod)
			bindReactor(client, true)
			start(t, client)
			switch {
			case tt.wantNode != "":
				waitFor(t, "binding", func() bool { return bindings(client)[tt.pod.Name] == tt.wantNode })
				waitFor(t, "Scheduled event", func() bool { return eventFor(t, client, tt.pod.Name, EventScheduled, tt.wantEvent) })
			case tt.wantFit != "":
				waitFor(t, "condition", func() bool {
					p, _ := client.CoreV1().Pods("default").Get(context.Background(), tt.pod.Name, metav1.GetOptions{})
					c := scheduledCondition(p)
					return c != nil && c.Status == corev1.ConditionFalse && c.Reason == corev1.PodReasonUnschedulable && c.Message == tt.wantFit
				})
				waitFor(t, "FailedScheduling event", func() bool { return eventFor(t, client, tt.pod.Name, EventFailedScheduling, tt.wantFit) })
				if b := bindings(client); len(b) != 0 {
					t.Fatalf("unexpected bindings %v", b)
				}
			default:
				time.Sleep(300 * time.Millisecond)
				if b := bindings(client); len(b) != 0 {
					t.Fatalf("unexpected bindings %v", b)
				}
			}
		})
	}
}

// TestAssumeCache: the cache never shows the bindings, so only the assume
// cache keeps two 600m pods from landing on the same 1-cpu node.
func TestAssumeCache(t *testing.T) {
	client := fake.NewClientset(node("n1", "1"), node("n2", "1"), pod("a", "600m"), pod("b", "600m"))
	bindReactor(client, false)
	start(t, client)
	waitFor(t, "two bindings", func() bool { return len(bindings(client)) == 2 })
	b := bindings(client)
	if b["a"] == b["b"] {
		t.Fatalf("both pods bound to %s", b["a"])
	}
}

// TestRetryOnNodeAdd: an unschedulable pod is bound once a big Node comes,
// and its status update alone does not make it loop.
func TestRetryOnNodeAdd(t *testing.T) {
	client := fake.NewClientset(node("n1", "1"), pod("big", "4"))
	bindReactor(client, true)
	start(t, client)
	waitFor(t, "FailedScheduling event", func() bool {
		return eventFor(t, client, "big", EventFailedScheduling, "0/1 nodes are available: 1 Insufficient cpu. preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod.")
	})
	time.Sleep(200 * time.Millisecond)
	updates := 0
	for _, a := range client.Actions() {
		if a.GetVerb() == "update" && a.GetSubresource() == "status" {
			updates++
		}
	}
	for _, a := range client.Actions() {
		if ua, ok := a.(k8stesting.UpdateAction); ok && a.GetSubresource() == "status" {
			t.Logf("update %+v", ua.GetObject().(*corev1.Pod).Status)
		}
	}
	if updates != 1 {
		t.Fatalf("%d status updates, want 1 (only on change)", updates)
	}
	if _, err := client.CoreV1().Nodes().Create(context.Background(), node("n2", "8"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "binding to n2", func() bool { return bindings(client)["big"] == "n2" })
}

// TestNominationHeldInMemory: preemption reserves the room it made before
// the preemptor's status.nominatedNodeName shows in the cache (here it
// never does, and the preemptor cannot bind), so a lower-priority pod
// created after the victim is gone does not take that room.
func TestNominationHeldInMemory(t *testing.T) {
	busy := pod("busy", "1500m")
	busy.Spec.NodeName = "n1"
	vip := pod("vip", "1")
	vip.Spec.Priority = ptr.To[int32](1000)
	client := fake.NewClientset(node("n1", "2"), busy, vip)
	bindReactor(client, true)
	client.PrependReactor("create", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
		if a.GetSubresource() == "binding" && a.(k8stesting.CreateAction).GetObject().(*corev1.Binding).Name == "vip" {
			return true, nil, errors.New("vip does not bind in this test")
		}
		return false, nil, nil
	})
	client.PrependReactor("update", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
		if a.GetSubresource() == "status" && a.(k8stesting.UpdateAction).GetObject().(*corev1.Pod).Name == "vip" {
			return true, a.(k8stesting.UpdateAction).GetObject(), nil // accepted, never stored
		}
		return false, nil, nil
	})
	start(t, client)
	waitFor(t, "busy preempted", func() bool {
		_, err := client.CoreV1().Pods("default").Get(context.Background(), "busy", metav1.GetOptions{})
		return apierrors.IsNotFound(err)
	})
	if _, err := client.CoreV1().Pods("default").Create(context.Background(), pod("filler", "1500m"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Second)
	if n := bindings(client)["filler"]; n != "" {
		t.Fatalf("filler bound to %s, into the room kept for vip", n)
	}
}
