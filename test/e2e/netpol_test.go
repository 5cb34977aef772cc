package e2e

import (
	"context"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"

	"github.com/orch/orch/agent/netpol"
	"github.com/orch/orch/agent/network"
)

// TestNetpol: the agent enforces NetworkPolicy on a real node. A server
// pod (httpd on 80) and two clients (role=frontend, role=other): both
// reach it without policy; default-deny ingress blocks both; allowing
// role=frontend on port 80 lets only the frontend in; deleting the
// policies opens it again; an egress ipBlock that excepts the server's IP
// blocks the other client.
func TestNetpol(t *testing.T) {
	e := startCluster(t)
	cs := e.server.Clientset
	t.Cleanup(func() { netpolCleanup(t, e) })
	waitNodeReady(t, e, true)
	serverIP := netpolStartPods(t, e, cs)
	k := newKubectl(t, e)
	url := "http://" + serverIP + "/"
	netpolExpect(t, k, url, map[string]bool{"frontend": true, "other": true})

	netpolCreate(t, cs, netpolPolicy("deny-ingress", metav1.LabelSelector{}, func(s *networkingv1.NetworkPolicySpec) {
		s.PolicyTypes = []networkingv1.PolicyType{networkingv1.PolicyTypeIngress}
	}))
	netpolExpect(t, k, url, map[string]bool{"frontend": false, "other": false})
	netpolStaysReady(t, cs, "server") // the node's own probes still get in

	netpolCreate(t, cs, netpolPolicy("allow-frontend", metav1.LabelSelector{MatchLabels: map[string]string{"app": "server"}},
		func(s *networkingv1.NetworkPolicySpec) {
			port := intstr.FromInt32(80)
			s.Ingress = []networkingv1.NetworkPolicyIngressRule{{
				From:  []networkingv1.NetworkPolicyPeer{{PodSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"role": "frontend"}}}},
				Ports: []networkingv1.NetworkPolicyPort{{Port: &port}}}}
		}))
	netpolExpect(t, k, url, map[string]bool{"frontend": true, "other": false})

	netpolDelete(t, cs, "deny-ingress", "allow-frontend")
	netpolExpect(t, k, url, map[string]bool{"frontend": true, "other": true})

	netpolCreate(t, cs, netpolPolicy("other-egress", metav1.LabelSelector{MatchLabels: map[string]string{"role": "other"}},
		func(s *networkingv1.NetworkPolicySpec) {
			s.PolicyTypes = []networkingv1.PolicyType{networkingv1.PolicyTypeEgress}
			s.Egress = []networkingv1.NetworkPolicyEgressRule{{To: []networkingv1.NetworkPolicyPeer{
				{IPBlock: &networkingv1.IPBlock{CIDR: "0.0.0.0/0", Except: []string{serverIP + "/32"}}}}}}
		}))
	netpolExpect(t, k, url, map[string]bool{"frontend": true, "other": false})

	netpolDelete(t, cs, "other-egress")
	netpolExpect(t, k, url, map[string]bool{"frontend": true, "other": true})
	waitFor(t, 30*time.Second, "no per-pod network policy chain left", func() (bool, error) {
		out, err := exec.Command(network.DetectIPTables(zaptest.NewLogger(t))+"-save", "-t", "filter").Output()
		return err == nil && !strings.Contains(string(out), e.chainPfx+"NP-"), err
	})
}

// netpolStaysReady checks that a pod with a 1 s readiness probe stays
// Ready for a few probe periods.
func netpolStaysReady(t *testing.T, cs kubernetes.Interface, name string) {
	t.Helper()
	for range 4 {
		time.Sleep(time.Second)
		p, err := cs.CoreV1().Pods("default").Get(context.Background(), name, metav1.GetOptions{})
		if err != nil || !podReady(p) {
			t.Fatalf("pod %s not Ready under a default-deny ingress policy (%v): %+v", name, err, p.Status.Conditions)
		}
	}
}

// netpolStartPods starts server, frontend and other; it returns the
// server's pod IP.
func netpolStartPods(t *testing.T, e *agentEnv, cs kubernetes.Interface) string {
	t.Helper()
	server := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "server", Labels: map[string]string{"app": "server"}},
		Spec: corev1.PodSpec{NodeName: e.node, Containers: []corev1.Container{{Name: "web", Image: "nginx:1.25",
			ImagePullPolicy: corev1.PullIfNotPresent, Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 80}},
			ReadinessProbe: &corev1.Probe{PeriodSeconds: 1, FailureThreshold: 1, ProbeHandler: corev1.ProbeHandler{
				HTTPGet: &corev1.HTTPGetAction{Path: "/", Port: intstr.FromInt32(80)}}},
			Command: []string{"sh", "-c", "mkdir -p /www && echo netpol-ok > /www/index.html && exec httpd -f -p 80 -h /www"}}}}}
	createPod(t, cs, server)
	for _, role := range []string{"frontend", "other"} {
		c := bbContainer("client", "sleep 3600")
		c.ImagePullPolicy = corev1.PullIfNotPresent
		createPod(t, cs, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: role, Labels: map[string]string{"role": role}},
			Spec: corev1.PodSpec{NodeName: e.node, Containers: []corev1.Container{c}}})
	}
	for _, name := range []string{"frontend", "other"} {
		waitPod(t, cs, name, "Running and Ready", podReady)
	}
	return waitPod(t, cs, "server", "Running and Ready", podReady).Status.PodIP
}

// netpolReach reports whether client's wget of url succeeds within 3 s,
// and what it printed. (Debian's busybox wget crashes on -T, so the
// timeout applet bounds it.)
func netpolReach(k *kubectlRunner, client, url string) (bool, error) {
	out, err := k.run("", "exec", client, "--", "timeout", "3", "wget", "-q", "-O-", url)
	if err == nil && strings.Contains(out, "netpol-ok") {
		return true, nil
	}
	return false, fmt.Errorf("wget: %v: %s", err, strings.TrimSpace(out))
}

// netpolExpect waits until every client's reachability is as wanted, and
// checks that it stays so once more.
func netpolExpect(t *testing.T, k *kubectlRunner, url string, want map[string]bool) {
	t.Helper()
	for _, check := range []string{"reaches", "still reaches"} {
		for client, ok := range want {
			what := client + " " + check + " " + url
			if !ok {
				what = client + " is blocked from " + url + " (" + check + ")"
			}
			waitFor(t, 30*time.Second, what, func() (bool, error) {
				reached, err := netpolReach(k, client, url)
				return reached == ok, err
			})
		}
	}
}

func netpolPolicy(name string, sel metav1.LabelSelector, mut func(*networkingv1.NetworkPolicySpec)) *networkingv1.NetworkPolicy {
	p := &networkingv1.NetworkPolicy{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: networkingv1.NetworkPolicySpec{PodSelector: sel}}
	mut(&p.Spec)
	return p
}

func netpolCreate(t *testing.T, cs kubernetes.Interface, p *networkingv1.NetworkPolicy) {
	t.Helper()
	if _, err := cs.NetworkingV1().NetworkPolicies("default").Create(context.Background(), p, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating network policy %s: %v", p.Name, err)
	}
}

func netpolDelete(t *testing.T, cs kubernetes.Interface, names ...string) {
	t.Helper()
	for _, n := range names {
		if err := cs.NetworkingV1().NetworkPolicies("default").Delete(context.Background(), n, metav1.DeleteOptions{}); err != nil {
			t.Fatalf("deleting network policy %s: %v", n, err)
		}
	}
}

// netpolCleanup stops the agent (so it cannot put its rules back) and
// removes its network policy chains and jump; the agent env's own cleanup
// then removes the rest.
func netpolCleanup(t *testing.T, e *agentEnv) {
	e.stopAgent()
	log := zaptest.NewLogger(t)
	if err := netpol.Cleanup(log, e.chainPfx, network.DetectIPTables(log)); err != nil {
		t.Logf("network policy cleanup: %v", err)
	}
}
