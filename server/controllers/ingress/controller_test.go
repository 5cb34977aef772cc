package ingress

import (
	"context"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	agentingress "github.com/orch/orch/agent/ingress"
	"github.com/orch/orch/server/controllers/kit/kittest"
)

func node(t *testing.T, ctx context.Context, cs kubernetes.Interface, name, ip string, ready bool) {
	t.Helper()
	n, err := cs.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		if n, err = cs.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	st := corev1.ConditionFalse
	if ready {
		st = corev1.ConditionTrue
	}
	n.Status.Addresses = []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: ip}}
	n.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: st}}
	if _, err := cs.CoreV1().Nodes().UpdateStatus(ctx, n, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

func newIngress(t *testing.T, ctx context.Context, cs kubernetes.Interface, name string, class *string) {
	t.Helper()
	ing := &networkingv1.Ingress{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec: networkingv1.IngressSpec{IngressClassName: class, DefaultBackend: &networkingv1.IngressBackend{
			Service: &networkingv1.IngressServiceBackend{Name: "web", Port: networkingv1.ServiceBackendPort{Number: 80}}}}}
	if _, err := cs.NetworkingV1().Ingresses("default").Create(ctx, ing, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

func statusIPs(t *testing.T, ctx context.Context, cs kubernetes.Interface, name string) []string {
	t.Helper()
	ing, err := cs.NetworkingV1().Ingresses("default").Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, in := range ing.Status.LoadBalancer.Ingress {
		out = append(out, in.IP)
	}
	return out
}

func waitStatus(t *testing.T, ctx context.Context, cs kubernetes.Interface, name string, want ...string) {
	t.Helper()
	var got []string
	for end := time.Now().Add(10 * time.Second); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
		if got = statusIPs(t, ctx, cs, name); slices.Equal(got, want) {
			return
		}
	}
	t.Fatalf("status of %s: %v, want %v", name, got, want)
}

func TestClassAndStatus(t *testing.T) {
	cs, _ := kittest.Run(t, New)
	ctx := t.Context()
	for range 2 { // idempotent
		if err := EnsureClass(ctx, cs); err != nil {
			t.Fatal(err)
		}
	}
	var ic *networkingv1.IngressClass
	for end := time.Now().Add(10 * time.Second); ic == nil && time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
		if got, err := cs.NetworkingV1().IngressClasses().Get(ctx, agentingress.ClassName, metav1.GetOptions{}); err == nil {
			ic = got
		}
	}
	if ic == nil || ic.Spec.Controller != agentingress.ControllerName || ic.Annotations[agentingress.DefaultClassAnnotation] != "true" {
		t.Fatalf("IngressClass %+v", ic)
	}
	node(t, ctx, cs, "n1", "10.0.0.1", true)
	node(t, ctx, cs, "n2", "10.0.0.2", false)
	newIngress(t, ctx, cs, "ours", ptr.To(agentingress.ClassName))
	newIngress(t, ctx, cs, "defaulted", nil)
	newIngress(t, ctx, cs, "theirs", ptr.To("nginx"))
	waitStatus(t, ctx, cs, "ours", "10.0.0.1")
	waitStatus(t, ctx, cs, "defaulted", "10.0.0.1")
	node(t, ctx, cs, "n2", "10.0.0.2", true)
	waitStatus(t, ctx, cs, "ours", "10.0.0.1", "10.0.0.2")
	if got := statusIPs(t, ctx, cs, "theirs"); len(got) != 0 {
		t.Errorf("another class's Ingress got status %v", got)
	}
	// A heartbeat-like node update (same addresses) writes nothing.
	before, _ := cs.NetworkingV1().Ingresses("default").Get(ctx, "ours", metav1.GetOptions{})
	node(t, ctx, cs, "n1", "10.0.0.1", true)
	time.Sleep(300 * time.Millisecond)
	after, _ := cs.NetworkingV1().Ingresses("default").Get(ctx, "ours", metav1.GetOptions{})
	if before.ResourceVersion != after.ResourceVersion {
		t.Errorf("status rewritten without a change: %s -> %s", before.ResourceVersion, after.ResourceVersion)
	}

	if err := RemoveClass(ctx, cs); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.NetworkingV1().IngressClasses().Get(ctx, agentingress.ClassName, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("IngressClass after RemoveClass: %v", err)
	}
	if err := RemoveClass(ctx, cs); err != nil {
		t.Fatalf("second RemoveClass: %v", err)
	}
}
