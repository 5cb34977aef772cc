package e2e

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/containerd/containerd/v2/core/snapshots"
	"github.com/containerd/containerd/v2/pkg/namespaces"
	"github.com/vishvananda/netlink"
	"golang.org/x/net/websocket"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	"github.com/orch/orch/agent/runtime"
	"github.com/orch/orch/test/hostclean"
	"github.com/orch/orch/test/testutil"
)

// TestAgent runs one server and one agent and drives pods through them.
// The subtests share the node and run in order.
func TestAgent(t *testing.T) {
	e := startCluster(t)
	cs := e.server.Clientset
	waitFor(t, 90*time.Second, "node "+e.node+" Ready with a podCIDR", func() (bool, error) {
		n, err := cs.CoreV1().Nodes().Get(context.Background(), e.node, metav1.GetOptions{})
		return err == nil && n.Spec.PodCIDR != "" && nodeReady(n), err
	})
	t.Run("Node", func(t *testing.T) { checkNode(t, e, cs) })
	t.Run("WrongTokenStops", func(t *testing.T) { wrongToken(t, e) })
	t.Run("PodRunsAndContainersTalk", func(t *testing.T) { podRuns(t, e, cs) })
	t.Run("LogsThroughTheAPI", func(t *testing.T) { logsThroughAPI(t, cs) })
	t.Run("LogsOverWebSocket", func(t *testing.T) { logsOverWebSocket(t, e) })
	t.Run("KubectlExec", func(t *testing.T) { kubectlExec(t, e) })
	t.Run("ImagePullBackOff", func(t *testing.T) { imagePullBackOff(t, e, cs) })
	t.Run("CrashLoopBackOff", func(t *testing.T) { crashLoop(t, e, cs) })
	t.Run("OOMKilled", func(t *testing.T) { oomKilled(t, cs, e) })
	t.Run("LivenessRestarts", func(t *testing.T) { livenessRestarts(t, e, cs) })
	t.Run("ConfigMapUpdateReachesFile", func(t *testing.T) { configMapUpdate(t, e, cs) })
	t.Run("ServiceAccountToken", func(t *testing.T) { serviceAccountToken(t, e, cs) })
	t.Run("RestartAdoptsContainers", func(t *testing.T) { restartAdopts(t, e, cs) })
	t.Run("HostNetworkPod", func(t *testing.T) { hostNetworkPod(t, e, cs) })
	t.Run("ResizeInPlace", func(t *testing.T) { resizeInPlace(t, e, cs) })
	t.Run("EphemeralContainer", func(t *testing.T) { ephemeralContainer(t, e, cs) })
	t.Run("ImageVolume", func(t *testing.T) { imageVolume(t, e, cs) })
	t.Run("DeleteLeavesNothing", func(t *testing.T) { deleteLeavesNothing(t, e, cs) })
}

func nodeReady(n *corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func checkNode(t *testing.T, e *agentEnv, cs kubernetes.Interface) {
	n, err := cs.CoreV1().Nodes().Get(context.Background(), e.node, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if n.Labels["kubernetes.io/hostname"] != e.node || n.Labels["kubernetes.io/os"] != "linux" || n.Labels["e2e"] != "yes" {
		t.Errorf("labels %v", n.Labels)
	}
	if !strings.HasPrefix(n.Status.NodeInfo.ContainerRuntimeVersion, "containerd://") || n.Status.NodeInfo.KubeletVersion == "" {
		t.Errorf("nodeInfo %+v", n.Status.NodeInfo)
	}
	if n.Status.Capacity.Pods().Value() != 110 || n.Status.Allocatable.Memory().Cmp(*n.Status.Capacity.Memory()) >= 0 {
		t.Errorf("capacity %v allocatable %v", n.Status.Capacity, n.Status.Allocatable)
	}
	if _, cidr, _ := net.ParseCIDR(e.podCIDR); n.Spec.PodCIDR != cidr.String() {
		t.Errorf("podCIDR %s, want %s", n.Spec.PodCIDR, e.podCIDR)
	}
	waitFor(t, 30*time.Second, "the node's Lease", func() (bool, error) {
		l, err := cs.CoordinationV1().Leases("kube-node-lease").Get(context.Background(), e.node, metav1.GetOptions{})
		return err == nil && l.Spec.RenewTime != nil, err
	})
}

func bbContainer(name, script string) corev1.Container {
	return corev1.Container{Name: name, Image: "busybox:1.36", Command: []string{"sh", "-c", script}}
}

func createPod(t *testing.T, cs kubernetes.Interface, p *corev1.Pod) *corev1.Pod {
	t.Helper()
	p.Namespace = "default"
	if p.Spec.TerminationGracePeriodSeconds == nil {
		p.Spec.TerminationGracePeriodSeconds = ptr.To(int64(2))
	}
	out, err := cs.CoreV1().Pods("default").Create(context.Background(), p, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating pod %s: %v", p.Name, err)
	}
	return out
}

func waitPod(t *testing.T, cs kubernetes.Interface, name, what string, cond func(*corev1.Pod) bool) *corev1.Pod {
	t.Helper()
	var p *corev1.Pod
	waitFor(t, 60*time.Second, "pod "+name+" "+what, func() (bool, error) {
		var err error
		p, err = cs.CoreV1().Pods("default").Get(context.Background(), name, metav1.GetOptions{})
		return err == nil && cond(p), err
	})
	return p
}

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return p.Status.Phase == corev1.PodRunning && c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// podRuns: an init container writes into a shared emptyDir, an httpd and a
// client talk over localhost, everything reaches Running and Ready.
func podRuns(t *testing.T, e *agentEnv, cs kubernetes.Interface) {
	web := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web"}, Spec: corev1.PodSpec{
		NodeName:       e.node,
		InitContainers: []corev1.Container{bbContainer("init", "echo hello-from-init > /work/msg")},
		Containers: []corev1.Container{
			{Name: "web", Image: "nginx:1.25", Command: []string{"sh", "-c", "mkdir -p /www && echo served-over-localhost > /www/index.html && exec httpd -f -p 80 -h /www"}},
			bbContainer("client", "cat /work/msg; while true; do timeout 3 wget -qO- http://localhost/; sleep 1; done"),
		},
		Volumes: []corev1.Volume{{Name: "w", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}},
	}}
	web.Spec.InitContainers[0].VolumeMounts = []corev1.VolumeMount{{Name: "w", MountPath: "/work"}}
	web.Spec.Containers[1].VolumeMounts = []corev1.VolumeMount{{Name: "w", MountPath: "/work"}}
	created := createPod(t, cs, web)
	p := waitPod(t, cs, "web", "Running and Ready", podReady)
	if _, cidr, _ := net.ParseCIDR(e.podCIDR); !cidr.Contains(net.ParseIP(p.Status.PodIP)) {
		t.Fatalf("podIP %q not in %s", p.Status.PodIP, e.podCIDR)
	}
	if p.Status.HostIP == "" || p.Status.QOSClass != corev1.PodQOSBestEffort || len(p.Status.ContainerStatuses) != 2 {
		t.Fatalf("status %+v", p.Status)
	}
	for _, c := range p.Status.ContainerStatuses {
		if !c.Ready || c.State.Running == nil || !strings.HasPrefix(c.ImageID, "docker.io/library/") {
			t.Errorf("container %s status %+v", c.Name, c)
		}
	}
	logPath := filepath.Join(e.dataDir, "agent", "logs", fmt.Sprintf("default_web_%s", created.UID), "client", "0.log")
	waitFor(t, 20*time.Second, "the client's log to show the init output and the httpd answer", func() (bool, error) {
		b, err := os.ReadFile(logPath)
		s := string(b)
		return strings.Contains(s, "stdout F hello-from-init") && strings.Contains(s, "stdout F served-over-localhost"), err
	})
	waitFor(t, 10*time.Second, "events Pulled (already present), Created, Started", func() (bool, error) {
		evs, err := cs.CoreV1().Events("default").List(context.Background(), metav1.ListOptions{FieldSelector: "involvedObject.name=web"})
		if err != nil {
			return false, err
		}
		seen := map[string]bool{}
		for _, ev := range evs.Items {
			if ev.Reason == "Pulled" && !strings.Contains(ev.Message, "already present on machine") {
				continue
			}
			seen[ev.Reason] = true
		}
		return seen["Pulled"] && seen["Created"] && seen["Started"], nil
	})
	resolv, err := os.ReadFile(filepath.Join(e.dataDir, "agent", "pods", string(created.UID), "resolv.conf"))
	if err != nil || !strings.Contains(string(resolv), "nameserver 10.43.0.10") || !strings.Contains(string(resolv), "search default.svc.cluster.local svc.cluster.local cluster.local") {
		t.Errorf("resolv.conf %q (%v)", resolv, err)
	}
}

func oomKilled(t *testing.T, cs kubernetes.Interface, e *agentEnv) {
	hog := bbContainer("hog", "tail /dev/zero")
	hog.Resources.Limits = corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("32Mi")}
	createPod(t, cs, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "oom"}, Spec: corev1.PodSpec{
		NodeName: e.node, RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{hog}}})
	p := waitPod(t, cs, "oom", "Failed", func(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodFailed })
	term := p.Status.ContainerStatuses[0].State.Terminated
	if term == nil || term.Reason != "OOMKilled" || term.ExitCode != 137 {
		t.Fatalf("container state %+v, want terminated OOMKilled 137", p.Status.ContainerStatuses[0].State)
	}
	if p.Status.QOSClass != corev1.PodQOSBurstable {
		t.Errorf("qosClass %s", p.Status.QOSClass)
	}
}

// restartAdopts restarts the agent: the running pod keeps its containers.
func restartAdopts(t *testing.T, e *agentEnv, cs kubernetes.Interface) {
	before := waitPod(t, cs, "web", "Ready", podReady)
	e.stopAgent()
	e.startAgent()
	createPod(t, cs, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "probe-after-restart"}, Spec: corev1.PodSpec{
		NodeName: e.node, Containers: []corev1.Container{bbContainer("c", "sleep 3600")}}})
	waitPod(t, cs, "probe-after-restart", "Ready (the restarted agent works)", podReady)
	after := waitPod(t, cs, "web", "Ready", podReady)
	for i, c := range after.Status.ContainerStatuses {
		b := before.Status.ContainerStatuses[i]
		if c.ContainerID != b.ContainerID || c.RestartCount != b.RestartCount || !c.State.Running.StartedAt.Equal(&b.State.Running.StartedAt) {
			t.Errorf("container %s changed across the agent restart: before %s %v, after %s %v", c.Name, b.ContainerID, b.State.Running.StartedAt, c.ContainerID, c.State.Running.StartedAt)
		}
	}
	if !strings.Contains(e.agentLog(), "adopting running pod") {
		t.Error("the agent did not log adopting the pod")
	}
}

// deleteLeavesNothing deletes every pod and checks the host.
func deleteLeavesNothing(t *testing.T, e *agentEnv, cs kubernetes.Interface) {
	for _, name := range []string{"web", "oom", "probe-after-restart", "live", "cm", "noimage", "crash", "imgvol"} {
		if err := cs.CoreV1().Pods("default").Delete(context.Background(), name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			t.Fatalf("deleting %s: %v", name, err)
		}
	}
	waitFor(t, 60*time.Second, "the pods to disappear from the API", func() (bool, error) {
		l, err := cs.CoreV1().Pods("default").List(context.Background(), metav1.ListOptions{})
		return err == nil && len(l.Items) == 0, err
	})
	if m, _ := filepath.Glob(filepath.Join("/run/netns", e.netnsPfx+"*")); len(m) > 0 {
		t.Errorf("netns left: %v", m)
	}
	if br, err := netlink.LinkByName(e.bridge); err == nil {
		links, _ := netlink.LinkList()
		for _, l := range links {
			if l.Attrs().MasterIndex == br.Attrs().Index {
				t.Errorf("veth left on the bridge: %s", l.Attrs().Name)
			}
		}
	}
	if ips, _ := filepath.Glob(filepath.Join(e.dataDir, "agent", "ipam", "*.*.*.*")); len(ips) > 0 {
		t.Errorf("IP allocations left: %v", ips)
	}
	if left := podCgroups(e.cgroupRoot); len(left) > 0 {
		t.Errorf("pod cgroups left: %v", left)
	}
	if m := hostclean.MountsUnder(filepath.Join(e.dataDir, "agent", "pods"), filepath.Join("/run/netns", e.netnsPfx), filepath.Join(e.stateBase, "containerd", "io.containerd.runtime")); len(m) > 0 {
		t.Errorf("mounts left: %v", m)
	}
	if d, _ := os.ReadDir(filepath.Join(e.dataDir, "agent", "pods")); len(d) > 0 {
		t.Errorf("pod dirs left: %d", len(d))
	}
	client, err := runtime.Connect(context.Background(), filepath.Join(e.stateBase, "containerd", "containerd.sock"))
	if err != nil {
		t.Fatalf("connecting to the agent's containerd: %v", err)
	}
	defer client.Close()
	cs2, err := client.Containers(namespaces.WithNamespace(context.Background(), e.ns))
	if err != nil || len(cs2) > 0 {
		t.Errorf("containers left: %d (%v)", len(cs2), err)
	}
	var views []string
	_ = client.SnapshotService("overlayfs").Walk(namespaces.WithNamespace(context.Background(), e.ns), func(_ context.Context, i snapshots.Info) error {
		if strings.HasPrefix(i.Name, "orch-image-volume/") {
			views = append(views, i.Name)
		}
		return nil
	})
	if len(views) > 0 {
		t.Errorf("image volume views left: %v", views)
	}
}

// livenessRestarts: a failing exec liveness probe restarts the container;
// a passing readiness probe makes it Ready.
func livenessRestarts(t *testing.T, e *agentEnv, cs kubernetes.Interface) {
	c := bbContainer("app", "touch /tmp/ready; sleep 3600")
	c.LivenessProbe = &corev1.Probe{ProbeHandler: corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"cat", "/tmp/missing"}}},
		InitialDelaySeconds: 1, PeriodSeconds: 1, FailureThreshold: 1, TimeoutSeconds: 1, SuccessThreshold: 1}
	createPod(t, cs, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "live"}, Spec: corev1.PodSpec{
		NodeName: e.node, Containers: []corev1.Container{c}}})
	p := waitPod(t, cs, "live", "restarted by its liveness probe", func(p *corev1.Pod) bool {
		return len(p.Status.ContainerStatuses) == 1 && p.Status.ContainerStatuses[0].RestartCount >= 1
	})
	if last := p.Status.ContainerStatuses[0].LastTerminationState.Terminated; last == nil {
		t.Errorf("no lastState after the liveness restart: %+v", p.Status.ContainerStatuses[0])
	}
	waitFor(t, 10*time.Second, "Killing and Unhealthy events", func() (bool, error) {
		evs, err := cs.CoreV1().Events("default").List(context.Background(), metav1.ListOptions{FieldSelector: "involvedObject.name=live"})
		if err != nil {
			return false, err
		}
		var killing, unhealthy bool
		for _, ev := range evs.Items {
			killing = killing || (ev.Reason == "Killing" && strings.Contains(ev.Message, "failed liveness probe"))
			unhealthy = unhealthy || ev.Reason == "Unhealthy"
		}
		return killing && unhealthy, nil
	})
}

// configMapUpdate: a configMap volume's file follows the object.
func configMapUpdate(t *testing.T, e *agentEnv, cs kubernetes.Interface) {
	ctx := context.Background()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cm", Namespace: "default"}, Data: map[string]string{"greeting": "one"}}
	if _, err := cs.CoreV1().ConfigMaps("default").Create(ctx, cm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cs.CoreV1().ConfigMaps("default").Delete(context.Background(), "cm", metav1.DeleteOptions{})
	})
	c := bbContainer("app", "while true; do echo \"greeting=$(cat /cfg/greeting)\"; sleep 1; done")
	c.VolumeMounts = []corev1.VolumeMount{{Name: "cfg", MountPath: "/cfg"}}
	created := createPod(t, cs, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "cm"}, Spec: corev1.PodSpec{
		NodeName: e.node, Containers: []corev1.Container{c},
		Volumes: []corev1.Volume{{Name: "cfg", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
			LocalObjectReference: corev1.LocalObjectReference{Name: "cm"}}}}}}})
	waitPod(t, cs, "cm", "Ready", podReady)
	logPath := filepath.Join(e.dataDir, "agent", "logs", fmt.Sprintf("default_cm_%s", created.UID), "app", "0.log")
	waitFor(t, 15*time.Second, "greeting=one in the log", func() (bool, error) {
		b, err := os.ReadFile(logPath)
		return strings.Contains(string(b), "greeting=one"), err
	})
	cm.Data["greeting"] = "two"
	if _, err := cs.CoreV1().ConfigMaps("default").Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 30*time.Second, "greeting=two in the log after the ConfigMap update", func() (bool, error) {
		b, err := os.ReadFile(logPath)
		return strings.Contains(string(b), "greeting=two"), err
	})
}

// logsThroughAPI reads a container's log as kubectl logs does: the API
// server proxies pods/log to the agent's kubelet API.
func logsThroughAPI(t *testing.T, cs kubernetes.Interface) {
	var out []byte
	waitFor(t, 15*time.Second, "pods/log of web/client", func() (bool, error) {
		var err error
		out, err = cs.CoreV1().Pods("default").GetLogs("web", &corev1.PodLogOptions{Container: "client"}).DoRaw(context.Background())
		return err == nil && strings.Contains(string(out), "hello-from-init"), err
	})
}

// logsOverWebSocket reads pods/log as a WebSocket (binary.k8s.io), as
// the conformance spec and browsers' dashboards do: one message per chunk,
// closed at the end of the log.
func logsOverWebSocket(t *testing.T, e *agentEnv) {
	tlsCfg, err := rest.TLSConfigFor(e.server.Config)
	if err != nil {
		t.Fatal(err)
	}
	u := strings.Replace(e.server.Config.Host, "https://", "wss://", 1) + "/api/v1/namespaces/default/pods/web/log?container=client"
	cfg, err := websocket.NewConfig(u, "http://localhost")
	if err != nil {
		t.Fatal(err)
	}
	cfg.TlsConfig, cfg.Protocol = tlsCfg, []string{"binary.k8s.io"}
	ws, err := websocket.DialConfig(cfg)
	if err != nil {
		t.Fatalf("websocket to pods/log: %v", err)
	}
	defer ws.Close()
	var got strings.Builder
	for {
		var msg []byte
		if err := websocket.Message.Receive(ws, &msg); err == io.EOF {
			break
		} else if err != nil {
			t.Fatalf("reading the log websocket: %v", err)
		}
		got.Write(msg)
	}
	if !strings.Contains(got.String(), "hello-from-init") {
		t.Fatalf("log over websocket: %q", got.String())
	}
}

// kubectlExec runs a command in a container with the real kubectl.
func kubectlExec(t *testing.T, e *agentEnv) {
	kubectl := testutil.Kubectl(t)
	out, err := exec.Command(kubectl, "--kubeconfig", e.server.Kubeconfig, "exec", "web", "-c", "client", "--",
		"sh", "-c", "cat /work/msg; hostname; echo svc=$KUBERNETES_SERVICE_HOST; exit 3").CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 3 {
		t.Fatalf("kubectl exec: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "hello-from-init") || !strings.Contains(string(out), "web") {
		t.Fatalf("kubectl exec output:\n%s", out)
	}
	svc, err := e.server.Clientset.CoreV1().Services("default").Get(context.Background(), "kubernetes", metav1.GetOptions{})
	if err == nil && !strings.Contains(string(out), "svc="+svc.Spec.ClusterIP) {
		t.Errorf("KUBERNETES_SERVICE_HOST missing (want %s):\n%s", svc.Spec.ClusterIP, out)
	}
}

// wrongToken: an agent whose token pins another CA stops at once with a
// clear message, before registering anything.
func wrongToken(t *testing.T, e *agentEnv) {
	dir := t.TempDir()
	bad := "K10" + strings.Repeat("0", 64) + "::server:nope"
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, testutil.Binary(t), "agent", "--join", fmt.Sprintf("https://127.0.0.1:%d", e.server.HTTPSPort),
		"--data-dir", dir, "--node-name", "e2e-bad-"+e.id, "--node-ip", "127.0.0.1")
	cmd.Env = append(os.Environ(), "ORCH_TOKEN="+bad)
	out, err := cmd.CombinedOutput()
	if err == nil || ctx.Err() != nil {
		t.Fatalf("agent with a wrong token: err %v ctx %v\n%s", err, ctx.Err(), out)
	}
	if !strings.Contains(string(out), "does not match the token") {
		t.Errorf("no clear message:\n%s", out)
	}
	if _, err := e.server.Clientset.CoreV1().Nodes().Get(context.Background(), "e2e-bad-"+e.id, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("node registered despite the wrong token: %v", err)
	}
}

// imagePullBackOff: an image that cannot be pulled (a closed loopback
// registry port) gives ErrImagePull, then ImagePullBackOff, with events.
func imagePullBackOff(t *testing.T, e *agentEnv, cs kubernetes.Interface) {
	c := corev1.Container{Name: "app", Image: "127.0.0.1:1/missing:1", ImagePullPolicy: corev1.PullIfNotPresent}
	createPod(t, cs, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "noimage"}, Spec: corev1.PodSpec{
		NodeName: e.node, Containers: []corev1.Container{c}}})
	reasons := map[string]bool{}
	waitPod(t, cs, "noimage", "ImagePullBackOff", func(p *corev1.Pod) bool {
		if len(p.Status.ContainerStatuses) == 1 && p.Status.ContainerStatuses[0].State.Waiting != nil {
			reasons[p.Status.ContainerStatuses[0].State.Waiting.Reason] = true
		}
		return reasons["ImagePullBackOff"]
	})
	if p, _ := cs.CoreV1().Pods("default").Get(context.Background(), "noimage", metav1.GetOptions{}); p.Status.Phase != corev1.PodPending {
		t.Errorf("phase %s, want Pending", p.Status.Phase)
	}
	waitFor(t, 10*time.Second, "Failed and BackOff events", func() (bool, error) {
		evs, err := cs.CoreV1().Events("default").List(context.Background(), metav1.ListOptions{FieldSelector: "involvedObject.name=noimage"})
		if err != nil {
			return false, err
		}
		seen := map[string]bool{}
		for _, ev := range evs.Items {
			seen[ev.Reason] = true
		}
		return seen["Failed"] && seen["BackOff"] && seen["Pulling"], nil
	})
}

// crashLoop: a container that keeps failing is restarted, then backs off.
func crashLoop(t *testing.T, e *agentEnv, cs kubernetes.Interface) {
	createPod(t, cs, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "crash"}, Spec: corev1.PodSpec{
		NodeName: e.node, Containers: []corev1.Container{bbContainer("app", "echo boom; exit 2")}}})
	p := waitPod(t, cs, "crash", "in CrashLoopBackOff", func(p *corev1.Pod) bool {
		if len(p.Status.ContainerStatuses) != 1 {
			return false
		}
		w := p.Status.ContainerStatuses[0].State.Waiting
		return w != nil && w.Reason == "CrashLoopBackOff"
	})
	cs0 := p.Status.ContainerStatuses[0]
	last := cs0.LastTerminationState.Terminated
	if cs0.RestartCount < 1 || last == nil || last.ExitCode != 2 || last.Reason != "Error" || p.Status.Phase != corev1.PodRunning {
		t.Fatalf("phase %s status %+v", p.Status.Phase, cs0)
	}
}
