package multinode

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
)

// svcNetworkPolicy: the clients reach every web backend (on all nodes) by
// pod IP; a default-deny ingress policy on app=web cuts every client off,
// by pod IP and through the ClusterIP; a second policy allowing role=client
// on TCP 8080 lets the clients back in while a pod without that label
// (db-0) stays blocked. The policies are deleted after.
func svcNetworkPolicy(t *testing.T, e *svcEnv) {
	ctx := context.Background()
	np := e.c.Client.NetworkingV1().NetworkPolicies(svcNS)
	var targets []string
	for _, ip := range e.web {
		targets = append(targets, "http://"+ip+":8080/")
	}
	sort.Strings(targets)
	clusterIP := "http://" + e.webSvc.Spec.ClusterIP + "/"
	svcWaitReach(t, e, e.clients[0], targets, true)

	deny := &networkingv1.NetworkPolicy{ObjectMeta: metav1.ObjectMeta{Name: "web-deny-ingress", Namespace: svcNS},
		Spec: networkingv1.NetworkPolicySpec{PodSelector: metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
			PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeIngress}}}
	if _, err := np.Create(ctx, deny, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = np.Delete(ctx, deny.Name, metav1.DeleteOptions{}) }()
	for _, cl := range e.clients {
		svcWaitReach(t, e, cl, append(targets, clusterIP), false)
	}

	allow := &networkingv1.NetworkPolicy{ObjectMeta: metav1.ObjectMeta{Name: "web-allow-clients", Namespace: svcNS},
		Spec: networkingv1.NetworkPolicySpec{PodSelector: metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
			Ingress: []networkingv1.NetworkPolicyIngressRule{{
				From:  []networkingv1.NetworkPolicyPeer{{PodSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"role": "client"}}}},
				Ports: []networkingv1.NetworkPolicyPort{{Protocol: ptr.To(corev1.ProtocolTCP), Port: ptr.To(intstr.FromInt32(8080))}}}}}}
	if _, err := np.Create(ctx, allow, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = np.Delete(ctx, allow.Name, metav1.DeleteOptions{}) }()
	for _, cl := range e.clients {
		svcWaitReach(t, e, cl, append(targets, clusterIP), true)
	}
	// db-0 is no client: still blocked, however long we look.
	if got := svcReach(t, e, "db-0", targets); len(got) > 0 {
		t.Errorf("db-0 (no role=client label) reached %v despite the policies", got)
	}
}

// svcWaitReach waits until pod reaches every url (want true) or none.
func svcWaitReach(t *testing.T, e *svcEnv, pod string, urls []string, want bool) {
	t.Helper()
	var got []string
	svcPoll(t, 30*time.Second, fmt.Sprintf("%s reaching %v: %v", pod, urls, want), func() bool {
		got = svcReach(t, e, pod, urls)
		if want {
			return len(got) == len(urls)
		}
		return len(got) == 0
	}, func() string { return fmt.Sprintf("reached %v", got) })
	t.Logf("%s reaches %v: %v", pod, urls, want)
}

// svcReach lists the urls pod can fetch (in parallel, 2 s each).
func svcReach(t *testing.T, e *svcEnv, pod string, urls []string) []string {
	t.Helper()
	script := fmt.Sprintf(`for u in %s; do (timeout 2 wget -qO- "$u" >/dev/null 2>&1 && echo "OK $u") & done; wait`,
		strings.Join(urls, " "))
	out, stderr, err := e.c.Exec(context.Background(), svcNS, pod, "sh", "-c", script)
	if err != nil {
		t.Fatalf("probing %v from %s: %v\n%s%s", urls, pod, err, out, stderr)
	}
	var got []string
	for _, l := range strings.Split(out, "\n") {
		if u, ok := strings.CutPrefix(strings.TrimSpace(l), "OK "); ok {
			got = append(got, u)
		}
	}
	return got
}
