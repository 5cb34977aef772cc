package ctr

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
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

// A trimmed copy of test/e2e's agentEnv (unexported there): one agent with
// the test's own names beside a testutil server.

func requireHost(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("skipping: the agent needs root (netns, bridge, iptables, cgroups, containerd)")
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
	t          *testing.T
	node       string
	dataDir    string
	stateBase  string // /run/orchc-<id>: containerd state + fifos
	bridge     string
	netnsPfx   string
	chainPfx   string
	cgroupRoot string
	ns         string // containerd namespace
	podCIDR    string
	server     *testutil.Server
	proc       *exec.Cmd
	done       chan struct{}
	logFile    string
}

// socket is the agent's managed containerd socket.
func (e *agentEnv) socket() string {
	return filepath.Join(e.stateBase, "containerd", "containerd.sock")
}

// startCluster starts a server and an agent with the test busybox image
// (as busybox:1.36) in its air-gap dir.
func startCluster(t *testing.T) *agentEnv {
	requireHost(t)
	b := make([]byte, 3)
	_, _ = rand.Read(b)
	id := hex.EncodeToString(b)
	e := &agentEnv{t: t, node: "ctr-" + id, stateBase: "/run/orchc-" + id, bridge: "orchc" + id,
		netnsPfx: "orchc" + id + "-", chainPfx: "ORCHC" + strings.ToUpper(id) + "-", cgroupRoot: "orchc-" + id,
		ns: "orchc-" + id, podCIDR: fmt.Sprintf("10.246.%d.0/24", 1+int(b[0])%250)}
	dir, err := os.MkdirTemp("", "orch-ctr-agent-")
	if err != nil {
		t.Fatal(err)
	}
	e.dataDir = dir
	t.Cleanup(e.cleanup) // before the server's cleanup: runs after it
	e.server = testutil.StartServer(t, testutil.Options{Quiet: true, ExtraArgs: []string{"--cluster-cidr", e.podCIDR}})
	tok, err := os.ReadFile(filepath.Join(e.server.DataDir, "server", "token"))
	if err != nil {
		t.Fatalf("reading the join token: %v", err)
	}
	imgDir := filepath.Join(e.dataDir, "agent", "images")
	if err := os.MkdirAll(imgDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := testimages.WriteBusyboxImage(filepath.Join(imgDir, "busybox.tar"), testimages.BusyboxPath,
		"docker.io/library/busybox:1.36"); err != nil {
		t.Fatal(err)
	}
	e.startAgent(strings.TrimSpace(string(tok)))
	return e
}

// startAgent runs `orch agent` (token in ORCH_TOKEN) in its own process group.
func (e *agentEnv) startAgent(token string) {
	e.t.Helper()
	e.logFile = filepath.Join(e.dataDir, "agent.log")
	out, err := os.Create(e.logFile)
	if err != nil {
		e.t.Fatal(err)
	}
	defer out.Close()
	cmd := exec.Command(testutil.Binary(e.t), "agent", "--network-backend", "host-gw",
		"--join", fmt.Sprintf("https://127.0.0.1:%d", e.server.HTTPSPort), "--node-ip", "127.0.0.1",
		"--kubelet-port", strconv.Itoa(testutil.FreePorts(e.t, 1)[0]), "--data-dir", e.dataDir,
		"--node-name", e.node, "--cluster-cidr", e.podCIDR, "--bridge-name", e.bridge,
		"--containerd-state-dir", filepath.Join(e.stateBase, "containerd"), "--containerd-namespace", e.ns,
		"--cgroup-root", e.cgroupRoot, "--netns-prefix", e.netnsPfx, "--iptables-chain-prefix", e.chainPfx,
		"--fifo-dir", filepath.Join(e.stateBase, "fifo"), "--eviction-hard", "nodefs.available<1%,imagefs.available<1%",
		"--ingress-http-port", "0", "--ingress-https-port", "0") // never the host's 80 and 443
	cmd.Env = append(os.Environ(), "ORCH_TOKEN="+token)
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		e.t.Fatalf("starting the agent: %v", err)
	}
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

// cleanup removes everything the agent and its containers made.
func (e *agentEnv) cleanup() {
	if e.t.Failed() && e.logFile != "" {
		b, _ := os.ReadFile(e.logFile)
		if len(b) > 8000 {
			b = b[len(b)-8000:]
		}
		e.t.Logf("agent output (tail):\n%s", b)
	}
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
	e.cleanupIPTables()
	hostclean.RemoveCgroups(e.t.Logf, e.cgroupRoot)
	// runc's state root for the namespace (the shim's default, shared by
	// every containerd on the host): empty once the pod is deleted.
	_ = os.RemoveAll(filepath.Join("/run/containerd/runc", e.ns))
	_ = os.RemoveAll(e.stateBase)
	_ = os.RemoveAll(e.dataDir)
}

// cleanupIPTables removes the agent's chains (network, proxy, host ports).
func (e *agentEnv) cleanupIPTables() {
	ipam := filepath.Join(e.dataDir, "cleanup-ipam")
	_ = os.MkdirAll(ipam, 0o700)
	m, err := network.New(zaptest.NewLogger(e.t), network.Config{BridgeName: e.bridge, PodCIDR: e.podCIDR,
		ClusterCIDR: e.podCIDR, IPAMDir: ipam, NetnsPrefix: e.netnsPfx,
		NATChain: e.chainPfx + "POSTROUTING", FilterChain: e.chainPfx + "FORWARD"})
	if err == nil {
		if err := m.Cleanup(); err != nil {
			e.t.Logf("iptables cleanup: %v", err)
		}
		_ = m.Close()
	}
	hostclean.IPTablesChains(e.t.Logf, e.chainPfx)
}
