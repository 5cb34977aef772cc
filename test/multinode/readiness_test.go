package multinode

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// svcReadiness: a fourth web backend (web-flaky, on node 2) whose exec
// readiness probe checks a file joins the endpoints and answers; once the
// file is removed its probe fails, it turns not-ready in the EndpointSlice
// and the Endpoints, every node's proxy drops its DNAT, and no request from
// any node reaches it any more (it keeps running: readiness never
// restarts).
func svcReadiness(t *testing.T, e *svcEnv) {
	ctx := context.Background()
	cs := e.c.Client
	p := svcPod("web-flaky", e.c.Nodes[1].Name, map[string]string{"app": "web"}, svcWebScript("touch /tmp/ready && "))
	p.Spec.Containers[0].ReadinessProbe = &corev1.Probe{PeriodSeconds: 1, FailureThreshold: 1,
		ProbeHandler: corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"test", "-f", "/tmp/ready"}}}}
	if _, err := cs.CoreV1().Pods(svcNS).Create(ctx, p, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = cs.CoreV1().Pods(svcNS).Delete(ctx, "web-flaky", metav1.DeleteOptions{GracePeriodSeconds: ptr.To(int64(0))})
	}()
	ip := svcWaitPodReady(t, e, "web-flaky").Status.PodIP
	svcWaitReadyEndpoints(t, e, "web", 4)
	url := "http://" + e.webSvc.Spec.ClusterIP + "/"
	var seen map[string]int
	svcPoll(t, 30*time.Second, "web-flaky to answer through the ClusterIP", func() bool {
		seen = svcFetchN(t, e, e.clients[0], url, 20)
		return seen["web-flaky"] > 0
	}, func() string { return fmt.Sprint(seen) })

	if out, stderr, err := e.c.Exec(ctx, svcNS, "web-flaky", "rm", "/tmp/ready"); err != nil {
		t.Fatalf("removing web-flaky's readiness file: %v\n%s%s", err, out, stderr)
	}
	var state string
	svcPoll(t, 30*time.Second, "web-flaky ("+ip+") to turn not-ready in web's EndpointSlice", func() bool {
		eps := svcSliceEndpoints(t, e, "web")
		state = fmt.Sprint(eps)
		ready, listed := eps[ip]
		return !listed || !ready
	}, func() string { return state })
	t.Logf("web's EndpointSlice endpoints (address: ready) once web-flaky failed its probe: %s", state)
	svcCheckNotReadyAddress(t, e, ip)
	for i := range e.c.Nodes {
		svcPoll(t, 30*time.Second, fmt.Sprintf("node %d's proxy to drop the DNAT to %s", i+1, ip), func() bool {
			state, _ = e.c.InNode(i+1, "iptables-save", "-t", "nat")
			return !strings.Contains(state, "--to-destination "+ip+":8080")
		}, func() string { return state })
	}
	for _, cl := range e.clients {
		got := svcFetchN(t, e, cl, url, 20)
		if got["web-flaky"] > 0 {
			t.Errorf("%s reached the not-ready web-flaky %d times of 20: %v", cl, got["web-flaky"], got)
		}
	}
	pod, err := cs.CoreV1().Pods(svcNS).Get(ctx, "web-flaky", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if pod.Status.Phase != corev1.PodRunning || len(pod.Status.ContainerStatuses) != 1 || pod.Status.ContainerStatuses[0].RestartCount != 0 {
		t.Errorf("web-flaky should keep running unrestarted after failing readiness: %+v", pod.Status)
	}
}

// svcCheckNotReadyAddress: the v1 Endpoints lists ip under notReadyAddresses.
func svcCheckNotReadyAddress(t *testing.T, e *svcEnv, ip string) {
	var state string
	svcPoll(t, 15*time.Second, ip+" under notReadyAddresses of Endpoints web", func() bool {
		ep, err := e.c.Client.CoreV1().Endpoints(svcNS).Get(context.Background(), "web", metav1.GetOptions{})
		if err != nil {
			state = err.Error()
			return false
		}
		state = fmt.Sprintf("%+v", ep.Subsets)
		for _, s := range ep.Subsets {
			for _, a := range s.Addresses {
				if a.IP == ip {
					return false
				}
			}
			for _, a := range s.NotReadyAddresses {
				if a.IP == ip {
					return true
				}
			}
		}
		return false
	}, func() string { return state })
}

// svcSliceEndpoints maps the addresses of a Service's EndpointSlices to
// their ready condition.
func svcSliceEndpoints(t *testing.T, e *svcEnv, svc string) map[string]bool {
	t.Helper()
	list, err := e.c.Client.DiscoveryV1().EndpointSlices(svcNS).List(context.Background(),
		metav1.ListOptions{LabelSelector: discoveryv1.LabelServiceName + "=" + svc})
	if err != nil {
		t.Fatalf("listing the EndpointSlices of %s: %v", svc, err)
	}
	out := map[string]bool{}
	for _, s := range list.Items {
		for _, ep := range s.Endpoints {
			for _, a := range ep.Addresses {
				out[a] = ep.Conditions.Ready == nil || *ep.Conditions.Ready
			}
		}
	}
	return out
}

// svcWaitReadyEndpoints waits until a Service's EndpointSlices hold n ready
// addresses.
func svcWaitReadyEndpoints(t *testing.T, e *svcEnv, svc string, n int) map[string]bool {
	t.Helper()
	var eps map[string]bool
	svcPoll(t, 120*time.Second, fmt.Sprintf("%d ready endpoints of %s", n, svc), func() bool {
		eps = svcSliceEndpoints(t, e, svc)
		ready := 0
		for _, r := range eps {
			if r {
				ready++
			}
		}
		return ready == n
	}, func() string { return fmt.Sprint(eps) })
	return eps
}

// svcWaitPodReady waits until a pod of svcNS is Ready with an IP.
func svcWaitPodReady(t *testing.T, e *svcEnv, name string) *corev1.Pod {
	t.Helper()
	var p *corev1.Pod
	svcPoll(t, 120*time.Second, "pod "+name+" Ready", func() bool {
		var err error
		p, err = e.c.Client.CoreV1().Pods(svcNS).Get(context.Background(), name, metav1.GetOptions{})
		if err != nil || p.Status.PodIP == "" {
			return false
		}
		for _, c := range p.Status.Conditions {
			if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue {
				return true
			}
		}
		return false
	}, func() string {
		if p == nil {
			return "no pod"
		}
		return fmt.Sprintf("%s on %s: %+v", p.Status.Phase, p.Spec.NodeName, p.Status.Conditions)
	})
	return p
}
