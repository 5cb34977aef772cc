package netpol

import (
	"context"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
)

func apiPod(name, node, ip string, lbls map[string]string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name, Labels: lbls},
		Spec:   corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: "c"}}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, PodIP: ip}}
}

// TestControllerFollowsTheAPI: informer events drive the chains (fake
// clientset, in-memory iptables); stopping with nothing isolated removes
// everything.
func TestControllerFollowsTheAPI(t *testing.T) {
	cs := fake.NewClientset(
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "default"}},
		apiPod("server", "n1", "10.42.0.10", map[string]string{"app": "server"}),
		apiPod("remote", "n2", "10.42.1.10", map[string]string{"role": "frontend"}),
	)
	be := newFakeBackend()
	c, err := newController(Config{NodeName: "n1", Prefix: "T-", Client: cs, MinSyncPeriod: time.Millisecond}.withDefaults(),
		zaptest.NewLogger(t), be)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx) }()
	defer func() { cancel(); <-done }()

	n := newChainNames("T-")
	in := n.podChain(false, "default/server")
	wait(t, "the main chain and the jump", func() bool {
		_, ok := be.chain(n.Main)
		lines, _ := be.Rules("FORWARD")
		return ok && readJump(lines, n) == jumpState{copies: 1, early: true}
	})
	if n := watches(cs, "pods") + watches(cs, "namespaces"); n != 0 {
		t.Fatalf("%d pod and namespace watches without a NetworkPolicy, want none", n)
	}
	pol := policy("default", "fe", sel("app", "server"), func(s *networkingv1.NetworkPolicySpec) {
		s.Ingress = []networkingv1.NetworkPolicyIngressRule{{From: []networkingv1.NetworkPolicyPeer{podPeer(sel("role", "frontend"))}}}
	})
	for round := 1; round <= 2; round++ { // the second round watches the pods again
		if _, err := cs.NetworkingV1().NetworkPolicies("default").Create(ctx, pol, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		wait(t, "the server's ingress chain allowing the remote frontend", func() bool {
			r, _ := be.chain(in)
			return len(r) == 2 && strings.Contains(r[0], "-s 10.42.1.10/32")
		})
		if n := watches(cs, "pods"); n != round {
			t.Fatalf("round %d: %d pod watches, want %d", round, n, round)
		}
		if round == 2 {
			break
		}
		if err := cs.NetworkingV1().NetworkPolicies("default").Delete(ctx, "fe", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		wait(t, "the chains of the policy to go", func() bool { _, ok := be.chain(in); return !ok })
	}
	if err := cs.CoreV1().Pods("default").Delete(ctx, "server", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	wait(t, "the deleted pod's chain to go", func() bool { _, ok := be.chain(in); return !ok })
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	done <- nil
	if _, ok := be.chain(n.Main); ok || len(be.forward) != 0 {
		t.Fatalf("nothing isolated, yet rules stay after stop: %v %v", be.chains, be.forward)
	}
}

// watches counts the watch calls on resource.
func watches(cs *fake.Clientset, resource string) int {
	n := 0
	for _, a := range cs.Actions() {
		if a.GetVerb() == "watch" && a.GetResource().Resource == resource {
			n++
		}
	}
	return n
}

func wait(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestPodFromAPI(t *testing.T) {
	p := apiPod("a", "n1", "10.42.0.5", nil)
	p.Status.PodIPs = []corev1.PodIP{{IP: "10.42.0.5"}, {IP: "fd00::5"}}
	p.Spec.Containers[0].Ports = []corev1.ContainerPort{{Name: "http", ContainerPort: 80}, {ContainerPort: 81}}
	info, ok := podFromAPI(p, "n1")
	if !ok || !info.Local || len(info.IPs) != 1 || len(info.Ports) != 1 {
		t.Fatalf("podFromAPI = %+v, %v", info, ok)
	}
	if port, ok := info.namedPort("http", corev1.ProtocolTCP); !ok || port != 80 {
		t.Fatalf("named port http = %d, %v", port, ok)
	}
	if _, ok := info.namedPort("http", corev1.ProtocolUDP); ok {
		t.Fatal("http/UDP resolved")
	}
	for name, mut := range map[string]func(*corev1.Pod){
		"host network": func(p *corev1.Pod) { p.Spec.HostNetwork = true },
		"finished":     func(p *corev1.Pod) { p.Status.Phase = corev1.PodSucceeded },
		"no IP":        func(p *corev1.Pod) { p.Status.PodIP, p.Status.PodIPs = "", nil },
	} {
		q := p.DeepCopy()
		mut(q)
		if _, ok := podFromAPI(q, "n1"); ok {
			t.Errorf("%s: pod takes part", name)
		}
	}
}
