package multinode

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/orch/orch/test/cluster"
	testimages "github.com/orch/orch/test/images"
)

// TestMultinodeServicesVXLAN proves Services end to end on a 1-server +
// 2-agent cluster with real containers, over the VXLAN overlay: ClusterIP
// and Service names from pods on every node, load spread over endpoints on
// several nodes, NodePort and LoadBalancer from a client outside the
// cluster, readiness leaving the endpoints, headless/StatefulSet names,
// NetworkPolicy blocking then allowing, and a deleted Service's rules
// going away. Everything is torn down after (and checked).
func TestMultinodeServicesVXLAN(t *testing.T) { svcSuite(t, "vxlan") }

// TestMultinodeServicesHostGW is the same over host-gw routes.
func TestMultinodeServicesHostGW(t *testing.T) { svcSuite(t, "host-gw") }

// svcNS is the namespace the suite works in.
const svcNS = "svce2e"

// svcEnv is what the scenarios share.
type svcEnv struct {
	c       *cluster.Cluster
	out     *cluster.Outside
	clients []string          // client pod per node (index = node index)
	web     map[string]string // backend pod name -> pod IP
	webSvc  *corev1.Service
}

func svcSuite(t *testing.T, backend string) {
	c := cluster.Start(t, cluster.Options{Nodes: 3, Backend: backend, Busybox: true})
	e := svcSetup(t, c)
	t.Run("ClusterIP", func(t *testing.T) { svcClusterIP(t, e) })
	t.Run("ServiceName", func(t *testing.T) { svcServiceName(t, e) })
	t.Run("NodePortFromOutside", func(t *testing.T) { svcNodePort(t, e) })
	t.Run("LoadBalancerFromOutside", func(t *testing.T) { svcLoadBalancer(t, e) })
	t.Run("ExternalIPFromOutside", func(t *testing.T) { svcExternalIP(t, e) })
	t.Run("ReadinessLeavesEndpoints", func(t *testing.T) { svcReadiness(t, e) })
	t.Run("HeadlessStatefulSet", func(t *testing.T) { svcHeadless(t, e) })
	t.Run("NetworkPolicy", func(t *testing.T) { svcNetworkPolicy(t, e) })
	t.Run("DeleteServiceRemovesRules", func(t *testing.T) { svcDeleteService(t, e) })
	if err := e.out.Close(); err != nil {
		t.Error(err)
	}
	multinodeDownLeavesNothing(t, c)
}

// svcSetup creates everything up front so the pods start together: the
// namespace, 3 web backends spread over the nodes (a Deployment with a
// topology spread constraint), a long-running client pod on every node,
// the Services (ClusterIP, NodePort, LoadBalancer, headless) and the
// StatefulSet; then waits for the backends to be ready endpoints.
func svcSetup(t *testing.T, c *cluster.Cluster) *svcEnv {
	ctx := context.Background()
	cs := c.Client
	e := &svcEnv{c: c, out: c.Outside(), web: map[string]string{}}
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: svcNS}},
		metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.AppsV1().Deployments(svcNS).Create(ctx, svcWebDeployment(), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for i, n := range c.Nodes {
		name := fmt.Sprintf("client-%d", i+1)
		p := svcPod(name, n.Name, map[string]string{"role": "client"}, "exec sleep 100000")
		if _, err := cs.CoreV1().Pods(svcNS).Create(ctx, p, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		e.clients = append(e.clients, name)
	}
	svcCreateServices(t, e)
	svcCreateStatefulSet(t, e)
	svcWaitReadyEndpoints(t, e, "web", 3)
	pods, err := cs.CoreV1().Pods(svcNS).List(ctx, metav1.ListOptions{LabelSelector: "app=web,tier=deploy"})
	if err != nil {
		t.Fatal(err)
	}
	nodes := map[string]bool{}
	for _, p := range pods.Items {
		if p.DeletionTimestamp == nil && p.Status.PodIP != "" {
			e.web[p.Name] = p.Status.PodIP
			nodes[p.Spec.NodeName] = true
			t.Logf("backend %s: %s on %s", p.Name, p.Status.PodIP, p.Spec.NodeName)
		}
	}
	if len(nodes) < 3 {
		t.Errorf("the 3 web backends (topology spread maxSkew 1 over kubernetes.io/hostname) run on %d nodes, want 3", len(nodes))
		svcDumpScheduling(t, e)
	}
	for _, cl := range e.clients {
		svcWaitPodReady(t, e, cl)
	}
	svcWaitProxyDNAT(t, e, e.web)
	return e
}

// svcWaitProxyDNAT waits until every node's proxy DNATs to each backend
// (the proxies sync asynchronously after the EndpointSlice changes).
func svcWaitProxyDNAT(t *testing.T, e *svcEnv, backends map[string]string) {
	t.Helper()
	start := time.Now()
	for i := range e.c.Nodes {
		var nat string
		svcPoll(t, 30*time.Second, fmt.Sprintf("node %d's proxy to DNAT to every backend %v", i+1, backends), func() bool {
			nat, _ = e.c.InNode(i+1, "iptables-save", "-t", "nat")
			for _, ip := range backends {
				if !strings.Contains(nat, "--to-destination "+ip+":8080") {
					return false
				}
			}
			return true
		}, func() string { return nat })
	}
	t.Logf("every node's proxy DNATs to the %d backends (waited %v after the EndpointSlice was ready)",
		len(backends), time.Since(start).Round(time.Millisecond))
}

func svcWebDeployment() *appsv1.Deployment {
	labels := map[string]string{"app": "web", "tier": "deploy"}
	tmpl := svcPod("", "", labels, svcWebScript(""))
	tmpl.Spec.Containers[0].ReadinessProbe = &corev1.Probe{PeriodSeconds: 1, ProbeHandler: corev1.ProbeHandler{
		HTTPGet: &corev1.HTTPGetAction{Path: "/", Port: intstr.FromInt32(8080)}}}
	tmpl.Spec.TopologySpreadConstraints = []corev1.TopologySpreadConstraint{{MaxSkew: 1,
		TopologyKey: corev1.LabelHostname, WhenUnsatisfiable: corev1.DoNotSchedule,
		LabelSelector: &metav1.LabelSelector{MatchLabels: labels}}}
	return &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: svcNS},
		Spec: appsv1.DeploymentSpec{Replicas: ptr.To(int32(3)), Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: tmpl.ObjectMeta, Spec: tmpl.Spec}}}
}

// svcWebScript serves the pod's name on :8080 (after running pre).
func svcWebScript(pre string) string {
	return pre + `mkdir -p /www && hostname > /www/index.html && exec httpd -f -p 8080 -h /www`
}

func svcPod(name, node string, labels map[string]string, script string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: svcNS, Labels: labels},
		Spec: corev1.PodSpec{NodeName: node, TerminationGracePeriodSeconds: ptr.To(int64(1)),
			Containers: []corev1.Container{{Name: "c", Image: "docker.io/library/busybox:1.36",
				ImagePullPolicy: corev1.PullIfNotPresent, Command: []string{"sh", "-c", script},
				Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 8080}}}}}}
}

// svcCreateServices creates web (ClusterIP), web-np (NodePort) and web-lb
// (LoadBalancer), all selecting app=web on port 8080.
func svcCreateServices(t *testing.T, e *svcEnv) {
	mk := func(name string, typ corev1.ServiceType, port int32) *corev1.Service {
		return &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: svcNS},
			Spec: corev1.ServiceSpec{Type: typ, Selector: map[string]string{"app": "web"},
				Ports: []corev1.ServicePort{{Name: "http", Port: port, TargetPort: intstr.FromInt32(8080)}}}}
	}
	for _, s := range []*corev1.Service{mk("web", corev1.ServiceTypeClusterIP, 80),
		mk("web-np", corev1.ServiceTypeNodePort, 80), mk("web-lb", corev1.ServiceTypeLoadBalancer, 8088)} {
		got, err := e.c.Client.CoreV1().Services(svcNS).Create(context.Background(), s, metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("creating Service %s: %v", s.Name, err)
		}
		if s.Name == "web" {
			e.webSvc = got
		}
	}
}

// svcClusterIP: each node's client fetches the ClusterIP repeatedly; every
// request is answered, each client sees at least 2 backends and together
// they see all 3 (on 3 nodes).
func svcClusterIP(t *testing.T, e *svcEnv) {
	url := "http://" + e.webSvc.Spec.ClusterIP + "/"
	svcSpread(t, e, url)
	// Hairpin: a backend reaching its own Service sometimes lands on
	// itself (the proxy masquerades that, the bridge sends it back).
	var self string
	for name := range e.web {
		self = name
		break
	}
	var seen map[string]int
	svcPoll(t, 30*time.Second, self+" reaching itself through the ClusterIP", func() bool {
		seen = svcFetchN(t, e, self, url, 15)
		return seen[self] > 0
	}, func() string { return fmt.Sprint(seen) })
	t.Logf("%s (a backend) -> %s: %v", self, url, seen)
}

// svcServiceName: the same through cluster DNS, by the full name and by
// the short name (resolv.conf search path).
func svcServiceName(t *testing.T, e *svcEnv) {
	svcSpread(t, e, "http://web."+svcNS+".svc.cluster.local/")
	svcSpread(t, e, "http://web/")
}

func svcSpread(t *testing.T, e *svcEnv, url string) {
	all := map[string]int{}
	for i, cl := range e.clients {
		svcWaitFetch(t, e, cl, url)
		seen := svcFetchN(t, e, cl, url, 15)
		t.Logf("%s (node %d) -> %s: %v", cl, i+1, url, seen)
		if len(seen) < 2 {
			t.Errorf("%s on node %d reached only %v through %s in 15 requests, want >= 2 backends", cl, i+1, seen, url)
		}
		for k, v := range seen {
			all[k] += v
		}
	}
	for name := range e.web {
		if all[name] == 0 {
			t.Errorf("backend %s (%s) never answered %s from any node's client: %v", name, e.web[name], url, all)
		}
	}
}

// svcFetchN fetches url n times from pod and counts the answers by backend
// name; a failed request fails the test.
func svcFetchN(t *testing.T, e *svcEnv, pod, url string, n int) map[string]int {
	t.Helper()
	script := fmt.Sprintf(`for i in $(seq %d); do timeout 3 wget -qO- %s || echo FAIL; done`, n, url)
	out, stderr, err := e.c.Exec(context.Background(), svcNS, pod, "sh", "-c", script)
	if err != nil {
		t.Fatalf("fetching %s from %s: %v\n%s%s", url, pod, err, out, stderr)
	}
	seen := map[string]int{}
	for _, l := range strings.Fields(out) {
		seen[l]++
	}
	if seen["FAIL"] > 0 {
		t.Errorf("%d of %d requests from %s to %s failed (answers %v; stderr %s)", seen["FAIL"], n, pod, url, seen, stderr)
		delete(seen, "FAIL")
	}
	return seen
}

// svcWaitFetch waits until one fetch of url from pod succeeds (the proxy
// and DNS sync asynchronously).
func svcWaitFetch(t *testing.T, e *svcEnv, pod, url string) {
	t.Helper()
	var last string
	svcPoll(t, 30*time.Second, pod+" fetching "+url, func() bool {
		out, stderr, err := e.c.Exec(context.Background(), svcNS, pod, "timeout", "3", "wget", "-qO-", url)
		last = fmt.Sprintf("%v: %s%s", err, out, stderr)
		return err == nil
	}, func() string { return last })
}

// svcNodePort: from the outside client, every node's IP answers on the
// NodePort, whichever node the chosen backend runs on.
func svcNodePort(t *testing.T, e *svcEnv) {
	svc, err := e.c.Client.CoreV1().Services(svcNS).Get(context.Background(), "web-np", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	np := svc.Spec.Ports[0].NodePort
	if np < 30000 || np > 32767 {
		t.Fatalf("web-np has NodePort %d, want one in 30000-32767", np)
	}
	var urls []string
	for _, n := range e.c.Nodes {
		urls = append(urls, fmt.Sprintf("http://%s:%d/", n.IP, np))
	}
	svcOutsideSpread(t, e, urls)
}

// svcOutsideSpread fetches every url from the outside client (after a
// first success) 6 times; all answer and, together, >= 2 backends do. The
// backend is picked at random per connection, so while only one has
// answered it keeps fetching, up to 24 more times (all on one backend by
// chance then has a probability of about 3^-29).
func svcOutsideSpread(t *testing.T, e *svcEnv, urls []string) {
	all := map[string]int{}
	fetch := func(u string) {
		out, err := e.out.Run("timeout", "3", testimages.BusyboxPath, "wget", "-qO-", u)
		if err != nil {
			t.Errorf("outside client (%s) fetching %s: %v: %s", e.out.IP, u, err, out)
			return
		}
		all[strings.TrimSpace(out)]++
	}
	for _, u := range urls {
		var last string
		svcPoll(t, 30*time.Second, "the outside client fetching "+u, func() bool {
			out, err := e.out.Run("timeout", "3", testimages.BusyboxPath, "wget", "-qO-", u)
			last = fmt.Sprintf("%v: %s", err, out)
			return err == nil
		}, func() string { return last })
		for range 6 {
			fetch(u)
		}
	}
	for i := 0; len(all) < 2 && i < 24; i++ {
		fetch(urls[i%len(urls)])
	}
	t.Logf("outside client %s -> %v: %v", e.out.IP, urls, all)
	if len(all) < 2 {
		t.Errorf("the outside client reached only %v through %v, want >= 2 backends", all, urls)
	}
}

// svcLoadBalancer: web-lb gets the nodes' IPs as status.loadBalancer.ingress
// (the built-in service LB) and every ingress IP answers on the Service
// port from outside.
func svcLoadBalancer(t *testing.T, e *svcEnv) {
	var ips []string
	svcPoll(t, 30*time.Second, "web-lb's status.loadBalancer.ingress", func() bool {
		svc, err := e.c.Client.CoreV1().Services(svcNS).Get(context.Background(), "web-lb", metav1.GetOptions{})
		if err != nil {
			return false
		}
		ips = nil
		for _, in := range svc.Status.LoadBalancer.Ingress {
			ips = append(ips, in.IP)
		}
		return len(ips) == len(e.c.Nodes)
	}, func() string { return fmt.Sprint(ips) })
	sort.Strings(ips)
	var want []string
	for _, n := range e.c.Nodes {
		want = append(want, n.IP)
	}
	sort.Strings(want)
	if strings.Join(ips, ",") != strings.Join(want, ",") {
		t.Errorf("web-lb ingress %v, want the node IPs %v", ips, want)
	}
	var urls []string
	for _, ip := range ips {
		urls = append(urls, fmt.Sprintf("http://%s:8088/", ip))
	}
	svcOutsideSpread(t, e, urls)
}

// svcExternalIP: a Service with an externalIP answers there from outside
// once the outside client routes that address to a node (as a LAN router
// would).
func svcExternalIP(t *testing.T, e *svcEnv) {
	const extIP = "192.0.2.77"
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "web-ext", Namespace: svcNS},
		Spec: corev1.ServiceSpec{Selector: map[string]string{"app": "web"}, ExternalIPs: []string{extIP},
			Ports: []corev1.ServicePort{{Name: "http", Port: 8090, TargetPort: intstr.FromInt32(8080)}}}}
	if _, err := e.c.Client.CoreV1().Services(svcNS).Create(context.Background(), svc, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating Service web-ext with externalIPs: %v", err)
	}
	if out, err := e.out.Run("ip", "route", "replace", extIP+"/32", "via", e.c.Nodes[1].IP); err != nil {
		t.Fatalf("routing %s to node 2 in the outside client: %v\n%s", extIP, err, out)
	}
	svcOutsideSpread(t, e, []string{"http://" + extIP + ":8090/"})
}

// svcPoll polls cond every 300ms until it holds or timeout passes (then
// fails the test with detail()).
func svcPoll(t *testing.T, timeout time.Duration, what string, cond func() bool, detail func() string) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s; last: %s", timeout, what, detail())
		}
		time.Sleep(300 * time.Millisecond)
	}
}

// svcDumpScheduling logs what the scheduler saw: every node's taints and
// Ready condition, and the scheduling events of the namespace.
func svcDumpScheduling(t *testing.T, e *svcEnv) {
	t.Helper()
	cs := e.c.Client
	nodes, _ := cs.CoreV1().Nodes().List(context.Background(), metav1.ListOptions{})
	for _, n := range nodes.Items {
		t.Logf("node %s: unschedulable=%v taints=%v conditions=%v", n.Name, n.Spec.Unschedulable, n.Spec.Taints, n.Status.Conditions)
	}
	evs, _ := cs.CoreV1().Events(svcNS).List(context.Background(), metav1.ListOptions{})
	for _, ev := range evs.Items {
		if ev.Reason == "Scheduled" || ev.Reason == "FailedScheduling" {
			t.Logf("event %s %s: %s", ev.InvolvedObject.Name, ev.Reason, ev.Message)
		}
	}
}
