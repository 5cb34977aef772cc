package servicelb

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/orch/orch/server/controllers/kit/kittest"
)

func start(t *testing.T) (context.Context, kubernetes.Interface) {
	cs, _ := kittest.Run(t, New)
	return t.Context(), cs
}

func node(t *testing.T, ctx context.Context, cs kubernetes.Interface, name, ip string, ready bool) {
	t.Helper()
	n, err := cs.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		n, err = cs.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
		if err != nil {
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

func waitIngress(t *testing.T, ctx context.Context, cs kubernetes.Interface, want ...string) {
	t.Helper()
	var got []string
	for end := time.Now().Add(10 * time.Second); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
		s, err := cs.CoreV1().Services("default").Get(ctx, "lb", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		got = nil
		for _, in := range s.Status.LoadBalancer.Ingress {
			got = append(got, in.IP)
		}
		if slices.Equal(got, want) {
			return
		}
	}
	t.Fatalf("ingress %v, want %v", got, want)
}

// TestLoadBalancerStatus: the ingress lists the Ready nodes' addresses,
// follows node readiness and is cleared when the type changes.
func TestLoadBalancerStatus(t *testing.T) {
	ctx, cs := start(t)
	node(t, ctx, cs, "n2", "192.0.2.2", true)
	node(t, ctx, cs, "n1", "192.0.2.1", true)
	svc, err := cs.CoreV1().Services("default").Create(ctx, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "lb"},
		Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer, Selector: map[string]string{"app": "x"},
			Ports: []corev1.ServicePort{{Port: 80, Protocol: corev1.ProtocolTCP}}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	waitIngress(t, ctx, cs, "192.0.2.1", "192.0.2.2")
	node(t, ctx, cs, "n2", "192.0.2.2", false)
	waitIngress(t, ctx, cs, "192.0.2.1")
	for i := 0; ; i++ { // the controller may be writing the status at the same time
		svc, err = cs.CoreV1().Services("default").Get(ctx, "lb", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		svc.Spec.Type = corev1.ServiceTypeClusterIP
		svc.Spec.Ports[0].NodePort = 0
		svc.Spec.AllocateLoadBalancerNodePorts = nil
		svc.Spec.ExternalTrafficPolicy = ""
		if _, err = cs.CoreV1().Services("default").Update(ctx, svc, metav1.UpdateOptions{}); err == nil {
			break
		} else if i > 5 {
			t.Fatal(fmt.Errorf("changing the type: %w", err))
		}
	}
	waitIngress(t, ctx, cs)
}
