package e2e

import (
	"context"
	"crypto/rand"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/vishvananda/netlink"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"

	"github.com/orch/orch/agent/network"
	"github.com/orch/orch/test/hostclean"
)

// TestNodeAgent drives the node-level behaviour of one agent: host ports,
// the Ready condition following containerd and the pod network, a reboot
// (all runtime state gone, pods still bound) and re-registration of a
// deleted Node. The subtests share the node and run in order.
func TestNodeAgent(t *testing.T) {
	e := startCluster(t)
	t.Logf("node %s, bridge %s, chain prefix %s", e.node, e.bridge, e.chainPfx)
	cs := e.server.Clientset
	waitFor(t, 90*time.Second, "node "+e.node+" Ready with a podCIDR", func() (bool, error) {
		n, err := cs.CoreV1().Nodes().Get(context.Background(), e.node, metav1.GetOptions{})
		return err == nil && n.Spec.PodCIDR != "" && nodeReady(n), err
	})
	hp := nodeHostPortPod(t, e, cs)
	t.Run("HostPort", func(t *testing.T) { nodeHostPort(t, e, hp) })
	t.Run("ReadyFollowsPodNetwork", func(t *testing.T) { nodeReadyFollowsBridge(t, e, cs, hp) })
	t.Run("ReadyFollowsContainerd", func(t *testing.T) { nodeReadyFollowsContainerd(t, e, cs) })
	t.Run("RebootRecovery", func(t *testing.T) { nodeRebootRecovery(t, e, cs, hp, false) })
	t.Run("RebootWithFreshContainerdRoot", func(t *testing.T) { nodeRebootRecovery(t, e, cs, hp, true) })
	t.Run("ReRegistersDeletedNode", func(t *testing.T) { nodeReRegisters(t, e, cs) })
	t.Run("HostPortRulesRemoved", func(t *testing.T) { nodeHostPortRemoved(t, e, cs) })
	t.Run("DiskPressureFollowsThresholds", func(t *testing.T) { nodeDiskPressure(t, e, cs) })
}

// nodeDiskPressure restarts the agent with --eviction-hard
// imagefs.available<100% (always under pressure): DiskPressure turns True,
// the node lifecycle controller taints the node disk-pressure:NoSchedule
// and a new pod stays unscheduled; back on the usual thresholds the
// condition and taint go and the pod runs.
func nodeDiskPressure(t *testing.T, e *agentEnv, cs kubernetes.Interface) {
	restart := func(thresholds string) {
		e.stopAgent()
		e.evictionHard = thresholds
		e.startAgent()
	}
	restart("imagefs.available<100%")
	t.Cleanup(func() {
		if e.evictionHard != testFSThresholds {
			restart(testFSThresholds)
		}
	})
	waitFor(t, 60*time.Second, "DiskPressure=True and the disk-pressure taint", func() (bool, error) {
		return nodePressure(cs, e.node, corev1.ConditionTrue)
	})
	createPod(t, cs, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "after-pressure"},
		Spec: corev1.PodSpec{Containers: []corev1.Container{bbContainer("c", "sleep 3600")}}})
	t.Cleanup(func() {
		_ = cs.CoreV1().Pods("default").Delete(context.Background(), "after-pressure", metav1.DeleteOptions{})
	})
	nodeWaitPod(t, cs, "after-pressure", "Unschedulable", func(p *corev1.Pod) bool {
		for _, c := range p.Status.Conditions {
			if c.Type == corev1.PodScheduled && c.Reason == corev1.PodReasonUnschedulable {
				return p.Spec.NodeName == ""
			}
		}
		return false
	})
	restart(testFSThresholds)
	waitFor(t, 60*time.Second, "DiskPressure=False and no disk-pressure taint", func() (bool, error) {
		return nodePressure(cs, e.node, corev1.ConditionFalse)
	})
	nodeWaitPod(t, cs, "after-pressure", "Ready", podReady)
}

// nodePressure reports whether the node's DiskPressure condition is want
// and it carries the disk-pressure taint exactly when want is True.
func nodePressure(cs kubernetes.Interface, name string, want corev1.ConditionStatus) (bool, error) {
	n, err := cs.CoreV1().Nodes().Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		return false, err
	}
	tainted := false
	for _, t := range n.Spec.Taints {
		tainted = tainted || (t.Key == corev1.TaintNodeDiskPressure && t.Effect == corev1.TaintEffectNoSchedule)
	}
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeDiskPressure {
			return c.Status == want && tainted == (want == corev1.ConditionTrue), fmt.Errorf("DiskPressure=%s (%s), tainted %v", c.Status, c.Message, tainted)
		}
	}
	return false, fmt.Errorf("no DiskPressure condition")
}

// nodeHP is the host-port pod and the addresses it is published at.
type nodeHP struct {
	port    int
	dummyIP string // on a dummy interface the test made: a local address
}

// nodeHostPortPod starts busybox httpd with hostPort, and a dummy interface
// holding a 198.18.x.y/32 address (local to this host: traffic stays here).
func nodeHostPortPod(t *testing.T, e *agentEnv, cs kubernetes.Interface) *nodeHP {
	b := make([]byte, 2)
	_, _ = rand.Read(b)
	hp := &nodeHP{port: 20000 + int(b[0])<<4 + int(b[1]%16), dummyIP: fmt.Sprintf("198.18.%d.%d", b[0], 1+b[1]%250)}
	la := netlink.NewLinkAttrs()
	la.Name = "orchd" + e.id
	// A veth pair stands in for a dummy interface (the dummy module may be
	// missing); deleting one end deletes both.
	dummy := &netlink.Veth{LinkAttrs: la, PeerName: "orchp" + e.id}
	if err := netlink.LinkAdd(dummy); err != nil {
		t.Fatalf("interface for a local address: %v", err)
	}
	t.Cleanup(func() { _ = netlink.LinkDel(dummy) })
	addr, _ := netlink.ParseAddr(hp.dummyIP + "/32")
	if err := netlink.AddrAdd(dummy, addr); err != nil {
		t.Fatal(err)
	}
	if err := netlink.LinkSetUp(dummy); err != nil {
		t.Fatal(err)
	}
	web := corev1.Container{Name: "web", Image: "nginx:1.25",
		Command: []string{"sh", "-c", "mkdir -p /www && hostname > /www/index.html && exec httpd -f -p 8080 -h /www"},
		Ports:   []corev1.ContainerPort{{ContainerPort: 8080, HostPort: int32(hp.port)}},
		ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Port: intstr.FromInt32(8080)}},
			PeriodSeconds: 1}}
	createPod(t, cs, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "hostport"}, Spec: corev1.PodSpec{NodeName: e.node,
		Containers: []corev1.Container{web}}})
	t.Cleanup(func() {
		_ = cs.CoreV1().Pods("default").Delete(context.Background(), "hostport", metav1.DeleteOptions{})
	})
	nodeWaitPod(t, cs, "hostport", "Ready", podReady)
	return hp
}

// nodeWaitPod is waitPod that shows the pod's status and events on timeout.
func nodeWaitPod(t *testing.T, cs kubernetes.Interface, name, what string, cond func(*corev1.Pod) bool) *corev1.Pod {
	t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	for {
		p, err := cs.CoreV1().Pods("default").Get(context.Background(), name, metav1.GetOptions{})
		if err == nil && cond(p) {
			return p
		}
		if time.Now().After(deadline) {
			var evs []string
			for _, ev := range podEvents(t, cs, name) {
				evs = append(evs, ev.Reason+": "+ev.Message)
			}
			if p != nil {
				t.Fatalf("pod %s not %s: %v\nstatus %+v\nevents %v", name, what, err, p.Status, evs)
			}
			t.Fatalf("pod %s not %s: %v", name, what, err)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

func nodeGet(addr string) (string, error) {
	c := &http.Client{Timeout: 2 * time.Second}
	resp, err := c.Get("http://" + addr + "/")
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return strings.TrimSpace(string(b)), err
}

// nodeHostPort reaches the pod at hostIP:hostPort from the host: at a local
// address and at 127.0.0.1 (route_localnet, as the portmap plugin).
func nodeHostPort(t *testing.T, e *agentEnv, hp *nodeHP) {
	for _, ip := range []string{hp.dummyIP, "127.0.0.1"} {
		addr := net.JoinHostPort(ip, strconv.Itoa(hp.port))
		waitFor(t, 15*time.Second, "the pod at "+addr, func() (bool, error) {
			body, err := nodeGet(addr)
			return body == "hostport", err
		})
	}
	rules := nodeNATRules(t, e.chainPfx)
	if !strings.Contains(rules, fmt.Sprintf(`"default/hostport hostPort %d/tcp"`, hp.port)) ||
		!strings.Contains(rules, "-A PREROUTING -m addrtype --dst-type LOCAL") || !strings.Contains(rules, e.chainPfx+"HOSTPORTS") {
		t.Errorf("host-port rules missing or unnamed:\n%s", rules)
	}
}

// nodeNATRules returns the nat table's lines that name this instance's
// chains: other orch instances (tests in other packages run at the same
// time) may have pods of the same name.
func nodeNATRules(t *testing.T, chainPfx string) string {
	cmd := network.DetectIPTables(zap.NewNop()) + "-save" // iptables-save, iptables-nft-save or iptables-legacy-save
	out, err := exec.Command(cmd, "-t", "nat").CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", cmd, err, out)
	}
	var own []string
	for _, l := range strings.Split(string(out), "\n") {
		if strings.Contains(l, chainPfx) {
			own = append(own, l)
		}
	}
	return strings.Join(own, "\n")
}

func nodeReadyCond(cs kubernetes.Interface, name string) (corev1.NodeCondition, error) {
	n, err := cs.CoreV1().Nodes().Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		return corev1.NodeCondition{}, err
	}
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c, nil
		}
	}
	return corev1.NodeCondition{}, fmt.Errorf("no Ready condition")
}

// nodeReadyFollowsBridge deletes the bridge: the node turns NotReady with
// kubelet's network message, the agent recreates the bridge, the node is
// Ready again and the pods are reattached (the host port answers).
func nodeReadyFollowsBridge(t *testing.T, e *agentEnv, cs kubernetes.Interface, hp *nodeHP) {
	br, err := netlink.LinkByName(e.bridge)
	if err != nil {
		t.Fatal(err)
	}
	if err := netlink.LinkDel(br); err != nil {
		t.Fatal(err)
	}
	want := "container runtime network not ready: NetworkReady=false reason:NetworkPluginNotReady message:bridge " + e.bridge + " is missing"
	waitFor(t, 40*time.Second, "Ready=False for the missing bridge", func() (bool, error) {
		c, err := nodeReadyCond(cs, e.node)
		return c.Status == corev1.ConditionFalse && c.Reason == "KubeletNotReady" && c.Message == want, fmt.Errorf("%v: %+v", err, c)
	})
	waitFor(t, 40*time.Second, "Ready=True after the agent recreated the bridge", func() (bool, error) {
		c, err := nodeReadyCond(cs, e.node)
		return c.Status == corev1.ConditionTrue, fmt.Errorf("%v: %+v", err, c)
	})
	addr := net.JoinHostPort(hp.dummyIP, strconv.Itoa(hp.port))
	waitFor(t, 20*time.Second, "the host-port pod reachable again", func() (bool, error) {
		body, err := nodeGet(addr)
		return body == "hostport", err
	})
}

// nodeContainerdPID is the agent's managed containerd daemon.
func nodeContainerdPID(e *agentEnv) int {
	entries, _ := os.ReadDir("/proc")
	for _, ent := range entries {
		pid, err := strconv.Atoi(ent.Name())
		if err != nil {
			continue
		}
		comm, _ := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid))
		cmdline, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		if strings.TrimSpace(string(comm)) == "containerd" && strings.Contains(string(cmdline), e.stateBase) {
			return pid
		}
	}
	return 0
}

// nodeReadyFollowsContainerd freezes containerd (SIGSTOP): it no longer
// answers, the node turns NotReady ("container runtime is down"); SIGCONT
// and it is Ready again.
func nodeReadyFollowsContainerd(t *testing.T, e *agentEnv, cs kubernetes.Interface) {
	pid := nodeContainerdPID(e)
	if pid == 0 {
		t.Fatal("the agent's containerd process not found")
	}
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGCONT) })
	waitFor(t, 40*time.Second, "Ready=False with containerd frozen", func() (bool, error) {
		c, err := nodeReadyCond(cs, e.node)
		return c.Status == corev1.ConditionFalse && c.Reason == "KubeletNotReady" && c.Message == "container runtime is down", fmt.Errorf("%v: %+v", err, c)
	})
	if err := syscall.Kill(pid, syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 40*time.Second, "Ready=True with containerd back", func() (bool, error) {
		c, err := nodeReadyCond(cs, e.node)
		return c.Status == corev1.ConditionTrue, fmt.Errorf("%v: %+v", err, c)
	})
}

// nodeSimulateReboot stops the agent and removes what a reboot removes:
// every process of the pods and containerd's, containerd's state dir
// (tmpfs /run), the pods' netns, veths, bridge, iptables rules, cgroups and
// volume mounts. What is on disk stays: containerd's root (its metadata:
// containers without tasks), the agent's IPAM and pod dirs.
func nodeSimulateReboot(t *testing.T, e *agentEnv) {
	e.stopAgent()
	hostclean.KillProcs(t.Logf, func(pid int, cmdline string) bool {
		return strings.Contains(cmdline, e.stateBase) || hostclean.InCgroup(pid, "/"+e.cgroupRoot+"/")
	})
	hostclean.UnmountUnder(t.Logf, e.stateBase, filepath.Join(e.dataDir, "agent", "pods"), filepath.Join("/run/netns", e.netnsPfx))
	nsFiles, _ := filepath.Glob(filepath.Join("/run/netns", e.netnsPfx+"*"))
	for _, p := range nsFiles {
		_ = os.Remove(p)
	}
	if br, err := netlink.LinkByName(e.bridge); err == nil {
		links, _ := netlink.LinkList()
		for _, l := range links {
			if l.Attrs().MasterIndex == br.Attrs().Index {
				_ = netlink.LinkDel(l)
			}
		}
		_ = netlink.LinkDel(br)
	}
	ipam := filepath.Join(e.dataDir, "reboot-ipam")
	_ = os.MkdirAll(ipam, 0o700)
	m, err := network.New(zaptest.NewLogger(t), network.Config{BridgeName: e.bridge, PodCIDR: e.podCIDR, ClusterCIDR: e.podCIDR,
		IPAMDir: ipam, NetnsPrefix: e.netnsPfx, NATChain: e.chainPfx + "POSTROUTING", FilterChain: e.chainPfx + "FORWARD"})
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Cleanup(); err != nil {
		t.Errorf("iptables cleanup: %v", err)
	}
	_ = m.Close()
	_ = os.RemoveAll(ipam)
	for _, dir := range hostclean.CgroupDirs(e.cgroupRoot) {
		if err := hostclean.RmdirTree(dir); err != nil {
			t.Errorf("cgroup removal: %v", err)
		}
	}
	if err := os.RemoveAll(e.stateBase); err != nil {
		t.Fatal(err)
	}
}

// nodeRebootRecovery: after a simulated reboot the restarted agent brings
// the pods back with new containers (restartCount+1), IPs from its
// persisted allocations without leaks, the host port working again. With
// freshRoot containerd's root goes too (no container records, no images):
// the restart count then follows the logs, as kubelet's.
func nodeRebootRecovery(t *testing.T, e *agentEnv, cs kubernetes.Interface, hp *nodeHP, freshRoot bool) {
	if !freshRoot {
		c := bbContainer("app", "echo started >> /data/starts; sleep 3600")
		c.VolumeMounts = []corev1.VolumeMount{{Name: "data", MountPath: "/data"}}
		createPod(t, cs, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "survivor"}, Spec: corev1.PodSpec{NodeName: e.node,
			Containers: []corev1.Container{c}, Volumes: []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}}}})
		// No t.Cleanup here: the next subtest reboots with it again (the
		// cluster's cleanup removes it).
		createPod(t, cs, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "doomed"}, Spec: corev1.PodSpec{NodeName: e.node,
			Containers: []corev1.Container{bbContainer("app", "sleep 3600")}}})
		nodeWaitPod(t, cs, "doomed", "Ready", podReady)
	}
	before := map[string]*corev1.Pod{}
	for _, name := range []string{"survivor", "hostport"} {
		before[name] = nodeWaitPod(t, cs, name, "Ready", podReady)
	}
	nodeSimulateReboot(t, e)
	if !freshRoot { // deleted while the node is down: its IP must not leak
		if err := cs.CoreV1().Pods("default").Delete(context.Background(), "doomed", metav1.DeleteOptions{GracePeriodSeconds: new(int64)}); err != nil {
			t.Fatal(err)
		}
	}
	if freshRoot {
		if err := os.RemoveAll(filepath.Join(e.dataDir, "agent", "containerd", "root")); err != nil {
			t.Fatal(err)
		}
	}
	e.startAgent()
	for name, b := range before {
		p := nodeWaitPod(t, cs, name, "Ready again after the reboot with a new container", func(p *corev1.Pod) bool {
			return podReady(p) && len(p.Status.ContainerStatuses) == 1 &&
				p.Status.ContainerStatuses[0].ContainerID != b.Status.ContainerStatuses[0].ContainerID
		})
		got, old := p.Status.ContainerStatuses[0], b.Status.ContainerStatuses[0]
		if got.RestartCount != old.RestartCount+1 {
			t.Errorf("%s: restartCount %d, want %d", name, got.RestartCount, old.RestartCount+1)
		}
		t.Logf("%s after the reboot: container %s -> %s, restartCount %d -> %d, pod IP %s -> %s", name, old.ContainerID, got.ContainerID,
			old.RestartCount, got.RestartCount, b.Status.PodIP, p.Status.PodIP)
	}
	var ips, netns []string
	deadline := time.Now().Add(20 * time.Second) // the orphan GC runs at start and every sync period
	for {
		ips, _ = filepath.Glob(filepath.Join(e.dataDir, "agent", "ipam", "*.*.*.*"))
		netns, _ = filepath.Glob(filepath.Join("/run/netns", e.netnsPfx+"*"))
		if len(ips) == 2 && len(netns) == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Errorf("after the reboot: IP allocations %v, netns %v; want one per pod (2)", ips, netns)
			break
		}
		time.Sleep(250 * time.Millisecond)
	}
	addr := net.JoinHostPort(hp.dummyIP, strconv.Itoa(hp.port))
	waitFor(t, 20*time.Second, "the host port after the reboot", func() (bool, error) {
		body, err := nodeGet(addr)
		return body == "hostport", err
	})
}

// nodeReRegisters deletes the Node: the agent registers it again with its
// labels, the same podCIDR, Ready.
func nodeReRegisters(t *testing.T, e *agentEnv, cs kubernetes.Interface) {
	ctx := context.Background()
	old, err := cs.CoreV1().Nodes().Get(ctx, e.node, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := cs.CoreV1().Nodes().Delete(ctx, e.node, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	var n *corev1.Node
	waitFor(t, 40*time.Second, "the node registered again", func() (bool, error) {
		n, err = cs.CoreV1().Nodes().Get(ctx, e.node, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return false, err
		}
		return err == nil && n.UID != old.UID && n.Spec.PodCIDR != "" && nodeReady(n), err
	})
	if n.Spec.PodCIDR != old.Spec.PodCIDR || n.Labels["e2e"] != "yes" || n.Labels["kubernetes.io/hostname"] != e.node ||
		len(n.Status.Addresses) == 0 || n.Status.Capacity.Pods().Value() != 110 {
		t.Errorf("re-registered node: podCIDR %s (was %s) labels %v addresses %v capacity %v", n.Spec.PodCIDR, old.Spec.PodCIDR,
			n.Labels, n.Status.Addresses, n.Status.Capacity)
	}
}

// nodeHostPortRemoved deletes the host-port pod: its rules go, the shared
// chains stay.
func nodeHostPortRemoved(t *testing.T, e *agentEnv, cs kubernetes.Interface) {
	ctx := context.Background()
	if err := cs.CoreV1().Pods("default").Delete(ctx, "hostport", metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		t.Fatal(err)
	}
	waitFor(t, 60*time.Second, "pod hostport gone", func() (bool, error) {
		_, err := cs.CoreV1().Pods("default").Get(ctx, "hostport", metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})
	// The pod leaves the API before the agent has finished tearing it down.
	var rules string
	deadline := time.Now().Add(20 * time.Second)
	for {
		rules = nodeNATRules(t, e.chainPfx)
		if !strings.Contains(rules, "default/hostport") && !strings.Contains(rules, e.chainPfx+"HP-") && !strings.Contains(rules, e.chainPfx+"HM-") {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("host-port rules left after the pod was deleted:\n%s", rules)
		}
		time.Sleep(250 * time.Millisecond)
	}
}
