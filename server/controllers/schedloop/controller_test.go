package schedloop

import (
	"context"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
)

func node(name, cpu string) *corev1.Node {
	rl := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu),
		corev1.ResourceMemory: resource.MustParse("4Gi"), corev1.ResourcePods: resource.MustParse("110")}
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name},
		Status: corev1.NodeStatus{Capacity: rl, Allocatable: rl,
			Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}}}
}

func pod(name, cpu string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID("uid-" + name)},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox",
			Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)}}}}}}
}

// bindings returns pod name → node of the binding creates seen so far.
func bindings(client *fake.Clientset) map[string]string {
	out := map[string]string{}
	for _, a := range client.Actions() {
		if ca, ok := a.(k8stesting.CreateAction); ok && a.GetSubresource() == "binding" {
			b := ca.GetObject().(*corev1.Binding)
			out[b.Name] = b.Target.Name
		}
	}
	return out
}

// bindReactor makes binding creates succeed; if apply, the pod's
// spec.nodeName is set in the tracker (otherwise the cache never shows it).
func bindReactor(client *fake.Clientset, apply bool) {
	client.PrependReactor("create", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
		if a.GetSubresource() != "binding" {
			return false, nil, nil
		}
		b := a.(k8stesting.CreateAction).GetObject().(*corev1.Binding)
		if apply {
			gvr := corev1.SchemeGroupVersion.WithResource("pods")
			obj, err := client.Tracker().Get(gvr, b.Namespace, b.Name)
			if err != nil {
				return true, nil, err
			}
			p := obj.(*corev1.Pod).DeepCopy()
			p.Spec.NodeName = b.Target.Name
			return true, b, client.Tracker().Update(gvr, p, b.Namespace)
		}
		return true, b, nil
	})
}

func start(t *testing.T, client kubernetes.Interface) {
	t.Helper()
	c, err := New(Config{Client: client, Logger: zaptest.NewLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = c.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// eventFor reports whether an event with reason and message on pod exists.
func eventFor(t *testing.T, client kubernetes.Interface, podName, reason, msg string) bool {
	t.Helper()
	evs, err := client.CoreV1().Events("default").List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range evs.Items {
		if e.InvolvedObject.Name == podName && e.Reason == reason && e.Message == msg &&
			e.Source.Component == SchedulerName {
			return true
		}
	}
	return false
}

func scheduledCondition(p *corev1.Pod) *corev1.PodCondition {
	for i := range p.Status.Conditions {
		if p.Status.Conditions[i].Type == corev1.PodScheduled {
			return &p.Status.Conditions[i]
		}
	}
	return nil
}

func TestPending(t *testing.T) {
	now := metav1.Now()
	tests := []struct {
		name string
		mod  func(*corev1.Pod)
		want bool
	}{
		{"plain", func(*corev1.Pod) {}, true},
		{"default scheduler", func(p *corev1.Pod) { p.Spec.SchedulerName = "default-scheduler" }, true},
		{"other scheduler", func(p *corev1.Pod) { p.Spec.SchedulerName = "other" }, false},
		{"bound", func(p *corev1.Pod) { p.Spec.NodeName = "n1" }, false},
		{"terminating", func(p *corev1.Pod) { p.DeletionTimestamp = &now }, false},
		{"succeeded", func(p *corev1.Pod) { p.Status.Phase = corev1.PodSucceeded }, false},
		{"failed", func(p *corev1.Pod) { p.Status.Phase = corev1.PodFailed }, false},
		{"scheduling gated", func(p *corev1.Pod) { p.Spec.SchedulingGates = []corev1.PodSchedulingGate{{Name: "x"}} }, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := pod("p", "100m")
			tt.mod(p)
			if got := pending(p); got != tt.want {
				t.Fatalf("pending = %v, want %v", got, tt.want)
			}
		})
	}
}
