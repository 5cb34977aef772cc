package multinode

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	testimages "github.com/orch/orch/test/images"
)

// svcCreateStatefulSet creates the headless Service db and a 2-pod
// StatefulSet db governed by it.
func svcCreateStatefulSet(t *testing.T, e *svcEnv) {
	ctx := context.Background()
	labels := map[string]string{"app": "db"}
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "db", Namespace: svcNS},
		Spec: corev1.ServiceSpec{ClusterIP: corev1.ClusterIPNone, Selector: labels,
			Ports: []corev1.ServicePort{{Name: "http", Port: 8080, TargetPort: intstr.FromInt32(8080)}}}}
	if _, err := e.c.Client.CoreV1().Services(svcNS).Create(ctx, svc, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating the headless Service db: %v", err)
	}
	tmpl := svcPod("", "", labels, "exec sleep 100000")
	ss := &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: "db", Namespace: svcNS},
		Spec: appsv1.StatefulSetSpec{Replicas: ptr.To(int32(2)), ServiceName: "db",
			PodManagementPolicy: appsv1.ParallelPodManagement,
			Selector:            &metav1.LabelSelector{MatchLabels: labels},
			Template:            corev1.PodTemplateSpec{ObjectMeta: tmpl.ObjectMeta, Spec: tmpl.Spec}}}
	if _, err := e.c.Client.AppsV1().StatefulSets(svcNS).Create(ctx, ss, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating the StatefulSet db: %v", err)
	}
}

// svcHeadless: from a client on every node, the cluster DNS resolves
// db-0.db.<ns>.svc.cluster.local and db-1... to those pods' IPs, and the
// headless name db.<ns>.svc.cluster.local to both.
func svcHeadless(t *testing.T, e *svcEnv) {
	ips := map[string]string{}
	for _, name := range []string{"db-0", "db-1"} {
		ips[name] = svcWaitPodReady(t, e, name).Status.PodIP
	}
	svcWaitReadyEndpoints(t, e, "db", 2)
	suffix := ".db." + svcNS + ".svc.cluster.local"
	for _, cl := range e.clients {
		for name, ip := range ips {
			svcWaitLookup(t, e, cl, name+suffix, ip)
		}
		svcWaitLookup(t, e, cl, "db."+svcNS+".svc.cluster.local", ips["db-0"], ips["db-1"])
	}
}

// svcWaitLookup waits until `nslookup name` in pod answers exactly the
// addresses want (the DNS server's own address aside).
func svcWaitLookup(t *testing.T, e *svcEnv, pod, name string, want ...string) {
	t.Helper()
	var last string
	svcPoll(t, 20*time.Second, fmt.Sprintf("%s resolving %s to %v", pod, name, want), func() bool {
		out, stderr, err := e.c.Exec(context.Background(), svcNS, pod, "nslookup", name)
		last = fmt.Sprintf("%v: %s%s", err, out, stderr)
		if err != nil {
			return false
		}
		got := svcAnswerAddrs(out)
		if len(got) != len(want) {
			return false
		}
		for _, w := range want {
			if !got[w] {
				return false
			}
		}
		return true
	}, func() string { return last + svcDNSDiag(e, pod, name) })
	t.Logf("%s: %s -> %v", pod, name, want)
}

// svcDNSDiag describes the cluster DNS on pod's node when a lookup failed:
// whether the agent's DNS interface and sockets are there, whether the
// node itself gets an answer, and the INPUT rules pods' packets meet.
func svcDNSDiag(e *svcEnv, pod, name string) string {
	node := 0
	for i, cl := range e.clients {
		if cl == pod {
			node = i + 1
		}
	}
	if node == 0 {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\n--- node %d, where %s runs ---", node, pod)
	for _, cmd := range [][]string{
		{"ip", "-br", "addr"},
		{"ss", "-ulnp"},
		{testimages.BusyboxPath, "nslookup", name, "10.43.0.10"},
		{"iptables", "-S", "INPUT"},
		{"iptables-save", "-t", "filter"},
	} {
		out, err := e.c.InNode(node, cmd[0], cmd[1:]...)
		fmt.Fprintf(&b, "\n$ %s (err %v)\n%s", strings.Join(cmd, " "), err, out)
	}
	return b.String()
}

// svcAnswerAddrs are the "Address: IP" lines of busybox nslookup's answer
// section (after the "Name:" line; the server's address comes before).
func svcAnswerAddrs(out string) map[string]bool {
	got, answer := map[string]bool{}, false
	for _, l := range strings.Split(out, "\n") {
		l = strings.TrimSpace(l)
		if strings.HasPrefix(l, "Name:") {
			answer = true
			continue
		}
		if a, ok := strings.CutPrefix(l, "Address:"); ok && answer && len(strings.Fields(a)) > 0 {
			got[strings.Fields(a)[0]] = true
		}
	}
	return got
}
