package e2e

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/vishvananda/netlink"
	"go.uber.org/zap/zaptest"

	"github.com/orch/orch/agent/dns"
	"github.com/orch/orch/agent/network"
	"github.com/orch/orch/test/hostclean"
	testimages "github.com/orch/orch/test/images"
	"github.com/orch/orch/test/testutil"
)

func requireHost(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("skipping: the agent end-to-end tests need root (netns, bridge, iptables, cgroups, containerd)")
	}
	for _, bin := range []string{"containerd", "runc", "containerd-shim-runc-v2", "iptables"} {
		if _, err := exec.LookPath(bin); err != nil {
			t.Skipf("skipping: %s not in PATH (scripts/install-deps.sh installs it)", bin)
		}
	}
	if _, err := os.Stat(testimages.BusyboxPath); err != nil {
		t.Skipf("skipping: %s missing (apt-get install busybox-static)", testimages.BusyboxPath)
	}
}

// agentEnv is one agent's private corner of the host.
type agentEnv struct {
	t           *testing.T
	id          string
	node        string
	dataDir     string
	stateBase   string // /run/orcht-<id>: containerd state + fifos
	bridge      string
	netnsPfx    string
	chainPfx    string
	cgroupRoot  string
	ns          string // containerd namespace
	podCIDR     string // the cluster CIDR: one /24, the node's
	server      *testutil.Server
	token       string
	proc        *exec.Cmd
	done        chan struct{}
	logFile     string
	runs        int
	kubeletPort int
	apiAddr     string // the address the server serves on and the node's IP (default 127.0.0.1)
	// evictionHard is the agent's --eviction-hard: testFSThresholds unless
	// a test sets it before (re)starting the agent.
	evictionHard string
	// ingressPorts are the agent's --ingress-http-port and
	// --ingress-https-port: free ports, never the host's 80 and 443.
	ingressPorts []int
}

// testFSThresholds turn the disk-pressure signals down to 1%: the host's
// disk (a shared build machine) is not what the tests are about, and
// kubelet's 10%/15% defaults would taint the node whenever its build
// caches grow. TestNodeAgent/DiskPressureFollowsThresholds tests pressure.
const testFSThresholds = "nodefs.available<1%,imagefs.available<1%"

func newAgentEnv(t *testing.T) *agentEnv {
	b := make([]byte, 3)
	_, _ = rand.Read(b)
	id := hex.EncodeToString(b)
	e := &agentEnv{t: t, id: id, node: "e2e-" + id, stateBase: "/run/orcht-" + id, bridge: "orcht" + id,
		netnsPfx: "orcht" + id + "-", chainPfx: "ORCHT" + strings.ToUpper(id) + "-", cgroupRoot: "orcht-" + id,
		ns: "orcht-" + id, podCIDR: fmt.Sprintf("10.244.%d.0/24", 1+int(b[0])%250), evictionHard: testFSThresholds}
	dir, err := os.MkdirTemp("", "orch-e2e-agent-")
	if err != nil {
		t.Fatal(err)
	}
	e.dataDir, e.ingressPorts = dir, testutil.FreePorts(t, 2)
	t.Cleanup(e.cleanup) // registered before the server's, so it runs after... see startCluster
	return e
}

// startCluster starts the server, drops the test image into the agent's
// air-gap dir and starts the agent.
func startCluster(t *testing.T) *agentEnv { return startClusterAt(t, "") }

// startClusterAt is startCluster with the server on apiAddr (bind and
// advertise) instead of loopback, for pods that must reach the API, and
// serverArgs added to its command line.
func startClusterAt(t *testing.T, apiAddr string, serverArgs ...string) *agentEnv {
	requireHost(t)
	e := newAgentEnv(t)
	args := append([]string{"--cluster-cidr", e.podCIDR}, serverArgs...)
	if apiAddr != "" {
		e.apiAddr = apiAddr
		args = append(args, "--bind-address", apiAddr, "--advertise-address", apiAddr)
	}
	e.server = testutil.StartServer(t, testutil.Options{Quiet: true, ExtraArgs: args})
	tok, err := os.ReadFile(filepath.Join(e.server.DataDir, "server", "token"))
	if err != nil {
		t.Fatalf("reading the join token: %v", err)
	}
	e.token = strings.TrimSpace(string(tok))
	imgDir := filepath.Join(e.dataDir, "agent", "images")
	if err := os.MkdirAll(imgDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := testimages.WriteBusyboxImage(filepath.Join(imgDir, "busybox.tar"), testimages.BusyboxPath,
		"docker.io/library/busybox:1.36", "docker.io/library/nginx:1.25"); err != nil {
		t.Fatal(err)
	}
	e.kubeletPort = testutil.FreePorts(t, 1)[0]
	e.startAgent()
	return e
}

func (e *agentEnv) args() []string {
	api, backend := e.apiAddr, "vxlan"
	if api == "" {
		api = "127.0.0.1"
	} else {
		backend = "host-gw" // one node needs no overlay; vxlan would add a host-wide orch.1
	}
	return []string{"agent", "--network-backend", backend, "--join", fmt.Sprintf("https://%s:%d", api, e.server.HTTPSPort),
		"--node-ip", api, "--kubelet-port", strconv.Itoa(e.kubeletPort),
		"--data-dir", e.dataDir, "--node-name", e.node, "--node-label", "e2e=yes", "--cluster-cidr", e.podCIDR,
		"--bridge-name", e.bridge, "--containerd-state-dir", filepath.Join(e.stateBase, "containerd"),
		"--containerd-namespace", e.ns, "--cgroup-root", e.cgroupRoot, "--netns-prefix", e.netnsPfx,
		"--iptables-chain-prefix", e.chainPfx, "--fifo-dir", filepath.Join(e.stateBase, "fifo"), "--sync-frequency", "3s",
		"--eviction-hard", e.evictionHard, "--debug",
		"--ingress-http-port", strconv.Itoa(e.ingressPorts[0]), "--ingress-https-port", strconv.Itoa(e.ingressPorts[1])}
}

// startAgent runs `orch agent` (token in ORCH_TOKEN, not on the command
// line) in its own process group.
func (e *agentEnv) startAgent() {
	e.t.Helper()
	e.runs++
	e.logFile = filepath.Join(e.dataDir, fmt.Sprintf("agent-%d.log", e.runs))
	out, err := os.Create(e.logFile)
	if err != nil {
		e.t.Fatal(err)
	}
	cmd := exec.Command(testutil.Binary(e.t), e.args()...)
	cmd.Env = append(os.Environ(), "ORCH_TOKEN="+e.token)
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		e.t.Fatalf("starting the agent: %v", err)
	}
	_ = out.Close()
	e.proc, e.done = cmd, make(chan struct{})
	go func(done chan struct{}) { _ = cmd.Wait(); close(done) }(e.done)
}

// stopAgent sends SIGTERM and waits (then SIGKILLs the group).
func (e *agentEnv) stopAgent() {
	if e.proc == nil {
		return
	}
	_ = e.proc.Process.Signal(syscall.SIGTERM)
	select {
	case <-e.done:
	case <-time.After(20 * time.Second):
		_ = syscall.Kill(-e.proc.Process.Pid, syscall.SIGKILL)
		<-e.done
	}
	e.proc = nil
}

// agentLog is the current agent run's output.
func (e *agentEnv) agentLog() string {
	b, _ := os.ReadFile(e.logFile)
	return string(b)
}

// dumpLog prints the agent output's tail when the test failed.
func (e *agentEnv) dumpLog() {
	if !e.t.Failed() || e.logFile == "" {
		return
	}
	// The periodic DEBUG lines would push the one line that explains a
	// failure out of the tail: they are shown only at the very end.
	all := strings.Split(e.agentLog(), "\n")
	var lines []string
	for _, l := range all {
		if !strings.Contains(l, "\tDEBUG\t") {
			lines = append(lines, l)
		}
	}
	e.t.Logf("agent output without DEBUG (last lines):\n%s", strings.Join(tail(lines, 150), "\n"))
	e.t.Logf("agent output (last lines):\n%s", strings.Join(tail(all, 20), "\n"))
	if e.server != nil {
		e.t.Logf("server output:\n%s", e.server.Output())
	}
}

// tail returns the last n lines.
func tail(lines []string, n int) []string {
	if len(lines) > n {
		return lines[len(lines)-n:]
	}
	return lines
}

// cleanup removes everything the agent and its containers made.
func (e *agentEnv) cleanup() {
	e.dumpLog()
	e.stopAgent()
	hostclean.KillProcs(e.t.Logf, func(pid int, cmdline string) bool {
		return strings.Contains(cmdline, e.stateBase) || hostclean.InCgroup(pid, "/"+e.cgroupRoot+"/")
	})
	hostclean.UnmountUnder(e.t.Logf, e.stateBase, e.dataDir, filepath.Join("/run/netns", e.netnsPfx))
	if m, _ := filepath.Glob(filepath.Join("/run/netns", e.netnsPfx+"*")); len(m) > 0 {
		for _, p := range m {
			_ = os.Remove(p)
		}
	}
	for _, name := range []string{e.bridge, dns.LinkName(e.bridge)} {
		if l, err := netlink.LinkByName(name); err == nil {
			_ = netlink.LinkDel(l)
		}
	}
	e.removeVXLAN()
	ipam := filepath.Join(e.dataDir, "cleanup-ipam")
	_ = os.MkdirAll(ipam, 0o700)
	if m, err := network.New(zaptest.NewLogger(e.t), network.Config{BridgeName: e.bridge, PodCIDR: e.podCIDR, ClusterCIDR: e.podCIDR,
		IPAMDir: ipam, NetnsPrefix: e.netnsPfx, NATChain: e.chainPfx + "POSTROUTING", FilterChain: e.chainPfx + "FORWARD"}); err == nil {
		if err := m.Cleanup(); err != nil {
			e.t.Logf("iptables cleanup: %v", err)
		}
		_ = m.Close()
	}
	hostclean.IPTablesChains(e.t.Logf, e.chainPfx) // proxy, netpol, host ports
	hostclean.RemoveCgroups(e.t.Logf, e.cgroupRoot)
	_ = os.RemoveAll(e.stateBase)
	_ = os.RemoveAll(e.dataDir)
}

// removeVXLAN deletes a VXLAN device bound to the test's own address,
// left by an agent run with the vxlan backend on it.
func (e *agentEnv) removeVXLAN() {
	if e.apiAddr == "" {
		return
	}
	links, _ := netlink.LinkList()
	for _, l := range links {
		if v, ok := l.(*netlink.Vxlan); ok && v.SrcAddr != nil && v.SrcAddr.String() == e.apiAddr {
			_ = netlink.LinkDel(l)
		}
	}
}

// podCgroups lists pod cgroup dirs left under the test's root.
func podCgroups(root string) []string {
	var out []string
	for _, dir := range hostclean.CgroupDirs(root) {
		_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err == nil && d.IsDir() && strings.HasPrefix(d.Name(), "pod") {
				out = append(out, p)
			}
			return nil
		})
	}
	return out
}

func waitFor(t *testing.T, timeout time.Duration, what string, cond func() (bool, error)) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	var last error
	for {
		ok, err := cond()
		if ok {
			return
		}
		last = err
		select {
		case <-ctx.Done():
			t.Fatalf("timed out after %v waiting for %s (last error: %v)", timeout, what, last)
		case <-time.After(200 * time.Millisecond):
		}
	}
}
