package twoinstances

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/vishvananda/netlink"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/orch/orch/internal/childproc"
	"github.com/orch/orch/internal/hostnames"
	"github.com/orch/orch/test/hostclean"
	testimages "github.com/orch/orch/test/images"
	"github.com/orch/orch/test/testutil"
)

// netnsDir is where the agent pins pod network namespaces.
const netnsDir = "/run/netns"

// instance is one `orch server` with its embedded agent, started with a
// data dir, ports and CIDRs of its own and nothing else.
type instance struct {
	t                        *testing.T
	name, bin, base, dataDir string
	clusterCIDR, serviceCIDR string
	clusterDNS               string
	names                    hostnames.Names
	cmd                      *exec.Cmd
	done                     chan struct{}
	logFile                  string
	client                   kubernetes.Interface
}

// newInstance prepares an instance: the shared orch binary, a temp base
// dir, and the busybox image in its air-gap dir. The
// cleanup removes whatever is left of it, even when the test fails.
func newInstance(t *testing.T, name string, third int) *instance {
	t.Helper()
	base, err := os.MkdirTemp("", "orch-2i-")
	if err != nil {
		t.Fatal(err)
	}
	in := &instance{t: t, name: name, base: base, dataDir: filepath.Join(base, "data"),
		clusterCIDR: fmt.Sprintf("10.246.%d.0/24", third), serviceCIDR: fmt.Sprintf("10.247.%d.0/24", third),
		clusterDNS: fmt.Sprintf("10.247.%d.10", third), logFile: filepath.Join(base, "server.log")}
	in.names = hostnames.For(in.dataDir)
	t.Cleanup(in.cleanup)
	in.bin = testutil.Binary(t) // one binary for both: killall tells them apart by data dir
	img := filepath.Join(in.dataDir, "agent", "images", "busybox.tar")
	if err := os.MkdirAll(filepath.Dir(img), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := testimages.WriteBusyboxImage(img, testimages.BusyboxPath, "docker.io/library/busybox:1.36"); err != nil {
		t.Fatal(err)
	}
	return in
}

// args is the server's whole command line: data dir, every port, the
// CIDRs and files of its own; no hidden knob.
func (in *instance) args() []string {
	ports := testutil.FreePorts(in.t, 5)
	cfg := filepath.Join(in.base, "config.yaml")
	if err := os.WriteFile(cfg, nil, 0o600); err != nil { // not /etc/orch/config.yaml
		in.t.Fatal(err)
	}
	return []string{"server", "--config", cfg, "--data-dir", in.dataDir,
		"--bind-address", "127.0.0.1", "--advertise-address", "127.0.0.1",
		"--https-listen-port", strconv.Itoa(ports[0]), "--raft-port", strconv.Itoa(ports[1]),
		"--kubelet-port", strconv.Itoa(ports[2]),
		"--ingress-http-port", strconv.Itoa(ports[3]), "--ingress-https-port", strconv.Itoa(ports[4]),
		"--cluster-cidr", in.clusterCIDR, "--service-cidr", in.serviceCIDR, "--cluster-dns", in.clusterDNS,
		"--write-kubeconfig", filepath.Join(in.base, "kubeconfig.yaml"),
		"--private-registry", filepath.Join(in.base, "registries.yaml"),
		"--node-name", "2i-" + in.name, "--eviction-hard", "nodefs.available<1%,imagefs.available<1%"}
}

// start runs the server in its own process group, output to its log file.
func (in *instance) start() {
	in.t.Helper()
	out, err := os.Create(in.logFile)
	if err != nil {
		in.t.Fatal(err)
	}
	defer out.Close()
	in.cmd = exec.Command(in.bin, in.args()...)
	in.cmd.Env = env()
	in.cmd.Stdout, in.cmd.Stderr = out, out
	in.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	in.t.Logf("%s: %s %s", in.name, in.bin, strings.Join(in.cmd.Args[1:], " "))
	waited, err := childproc.Start(in.cmd)
	if err != nil {
		in.t.Fatal(err)
	}
	in.done = make(chan struct{})
	go func(done chan struct{}) { <-waited; close(done) }(in.done)
}

// env is our environment without ORCH_* settings.
func env() []string { return testutil.ChildEnv() }

func (in *instance) exited() bool {
	select {
	case <-in.done:
		return true
	default:
		return false
	}
}

// waitExit waits for the server to exit by itself.
func (in *instance) waitExit(d time.Duration) error {
	select {
	case <-in.done:
		return nil
	case <-time.After(d):
		return fmt.Errorf("%s still running after %v", in.name, d)
	}
}

// connect waits for the admin kubeconfig and returns a client.
func (in *instance) connect(ctx context.Context) error {
	path := filepath.Join(in.base, "kubeconfig.yaml")
	for {
		if in.exited() {
			return errors.New("the server exited")
		}
		if _, err := os.Stat(path); err == nil {
			cfg, err := clientcmd.BuildConfigFromFlags("", path)
			if err != nil {
				return err
			}
			cfg.Timeout = 20 * time.Second
			if in.client, err = kubernetes.NewForConfig(cfg); err != nil {
				return err
			}
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("no kubeconfig: %w", ctx.Err())
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// state is the instance's node readiness and pod phase ("" when unknown).
func (in *instance) state(ctx context.Context) (ready bool, phase corev1.PodPhase) {
	if in.client == nil {
		return false, ""
	}
	if n, err := in.client.CoreV1().Nodes().Get(ctx, "2i-"+in.name, metav1.GetOptions{}); err == nil {
		for _, c := range n.Status.Conditions {
			if c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue {
				ready = true
			}
		}
	}
	if p, err := in.client.CoreV1().Pods("default").Get(ctx, "sleeper", metav1.GetOptions{}); err == nil {
		phase = p.Status.Phase
	}
	return ready, phase
}

// createPod creates a busybox pod bound to the instance's node, retrying
// while the server bootstraps the default namespace.
func (in *instance) createPod(ctx context.Context) error {
	one := int64(1)
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "sleeper", Namespace: "default"}, Spec: corev1.PodSpec{
		NodeName: "2i-" + in.name, TerminationGracePeriodSeconds: &one,
		Containers: []corev1.Container{{Name: "c", Image: "busybox:1.36", Command: []string{"sleep", "3600"}}},
	}}
	for {
		_, err := in.client.CoreV1().Pods("default").Create(ctx, pod, metav1.CreateOptions{})
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("creating the pod: %w", err)
		case <-time.After(time.Second):
		}
	}
}

// log is the tail of the server's output.
func (in *instance) log() string {
	b, _ := os.ReadFile(in.logFile)
	if len(b) > 8000 {
		b = b[len(b)-8000:]
	}
	return string(b)
}

// objects lists the instance's host objects that exist: links, bridge
// ports, pod netns, mounts, chains, cgroups, processes, the run dir and
// the containerd socket.
func (in *instance) objects() []string {
	n := in.names
	var out []string
	for _, l := range []string{n.Bridge, n.DNSLink, n.VXLANDevice} {
		if _, err := netlink.LinkByName(l); err == nil {
			out = append(out, "link "+l)
		}
	}
	if br, err := netlink.LinkByName(n.Bridge); err == nil {
		links, _ := netlink.LinkList()
		for _, l := range links {
			if l.Attrs().MasterIndex == br.Attrs().Index {
				out = append(out, "port "+l.Attrs().Name)
			}
		}
	}
	ns, _ := filepath.Glob(filepath.Join(netnsDir, n.NetnsPrefix+"*"))
	for _, f := range ns {
		out = append(out, "netns "+f)
	}
	for _, m := range hostclean.MountsUnder(n.RunDir+"/", in.dataDir+"/", filepath.Join(netnsDir, n.NetnsPrefix)) {
		out = append(out, "mount "+m)
	}
	for _, c := range chains(n.ChainPrefix) {
		out = append(out, "chain "+c)
	}
	for _, d := range hostclean.CgroupDirs(n.CgroupRoot) {
		out = append(out, "cgroup "+d)
	}
	out = append(out, in.processes()...)
	if _, err := os.Stat(n.RunDir); err == nil {
		out = append(out, "dir "+n.RunDir)
	}
	if st, err := os.Stat(filepath.Join(n.ContainerdStateDir, "containerd.sock")); err == nil && st.Mode()&os.ModeSocket != 0 {
		out = append(out, "socket "+filepath.Join(n.ContainerdStateDir, "containerd.sock"))
	}
	sort.Strings(out)
	return out
}

// processes lists the instance's live processes: the orch binary run
// with its data dir (both instances share the binary), anything
// naming its run dir (containerd, shims), anything in its cgroup root.
func (in *instance) processes() []string {
	return hostclean.Processes(hostclean.Instance{Bin: in.bin, DataDir: in.dataDir, RunDir: in.names.RunDir, CgroupRoot: in.names.CgroupRoot})
}

// chains lists the chains starting with prefix, and the rules jumping to
// them, in every iptables backend and table.
func chains(prefix string) []string {
	var out []string
	for _, cmd := range []string{"iptables-legacy", "iptables-nft", "ip6tables-legacy", "ip6tables-nft"} {
		for _, table := range []string{"filter", "nat", "mangle", "raw"} {
			b, err := exec.Command(cmd+"-save", "-t", table).Output()
			if err != nil {
				continue
			}
			for _, line := range strings.Split(string(b), "\n") {
				if strings.HasPrefix(line, ":"+prefix) || strings.Contains(line, "-j "+prefix) {
					out = append(out, cmd+":"+table+" "+line)
				}
			}
		}
	}
	return out
}

// cleanup removes whatever of the instance is left (the test's own
// cleanup; orch-killall.sh is what the test checks).
func (in *instance) cleanup() {
	t, n := in.t, in.names
	if t.Failed() && in.cmd != nil {
		t.Logf("%s server output (tail):\n%s", in.name, in.log())
	}
	if in.cmd != nil && in.cmd.Process != nil {
		_ = syscall.Kill(-in.cmd.Process.Pid, syscall.SIGKILL)
		<-in.done
	}
	hostclean.KillProcs(t.Logf, func(pid int, cmdline string) bool {
		exe, _ := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid))
		// The binary is shared with other tests: only this data dir's.
		ownBin := exe == in.bin && strings.Contains(cmdline, " --data-dir "+in.dataDir+" ")
		return ownBin || strings.Contains(cmdline, n.RunDir+"/") || hostclean.InCgroup(pid, "/"+n.CgroupRoot+"/")
	})
	hostclean.UnmountUnder(t.Logf, n.RunDir+"/", in.dataDir+"/", filepath.Join(netnsDir, n.NetnsPrefix))
	hostclean.UnmountUnder(t.Logf, n.RunDir)
	ns, _ := filepath.Glob(filepath.Join(netnsDir, n.NetnsPrefix+"*"))
	for _, f := range ns {
		_ = os.Remove(f)
	}
	if br, err := netlink.LinkByName(n.Bridge); err == nil {
		links, _ := netlink.LinkList()
		for _, l := range links {
			if l.Attrs().MasterIndex == br.Attrs().Index {
				_ = netlink.LinkDel(l)
			}
		}
	}
	for _, l := range []string{n.Bridge, n.DNSLink, n.VXLANDevice} {
		if link, err := netlink.LinkByName(l); err == nil {
			_ = netlink.LinkDel(link)
		}
	}
	hostclean.IPTablesChains(t.Logf, n.ChainPrefix)
	hostclean.RemoveCgroups(t.Logf, n.CgroupRoot)
	_ = os.RemoveAll(n.RunDir)
	_ = os.RemoveAll(in.base)
}
