package e2e

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
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
	"go.uber.org/zap/zaptest"
	"golang.org/x/sys/unix"

	"github.com/orch/orch/agent/network"
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
}

func newAgentEnv(t *testing.T) *agentEnv {
	b := make([]byte, 3)
	_, _ = rand.Read(b)
	id := hex.EncodeToString(b)
	e := &agentEnv{t: t, id: id, node: "e2e-" + id, stateBase: "/run/orcht-" + id, bridge: "orcht" + id,
		netnsPfx: "orcht" + id + "-", chainPfx: "ORCHT" + strings.ToUpper(id) + "-", cgroupRoot: "orcht-" + id,
		ns: "orcht-" + id, podCIDR: fmt.Sprintf("10.244.%d.0/24", 1+int(b[0])%250)}
	dir, err := os.MkdirTemp("", "orch-e2e-agent-")
	if err != nil {
		t.Fatal(err)
	}
	e.dataDir = dir
	t.Cleanup(e.cleanup) // registered before the server's, so it runs after... see startCluster
	return e
}

// startCluster starts the server, drops the test image into the agent's
// air-gap dir and starts the agent.
func startCluster(t *testing.T) *agentEnv {
	requireHost(t)
	e := newAgentEnv(t)
	e.server = testutil.StartServer(t, testutil.Options{Quiet: true, ExtraArgs: []string{"--cluster-cidr", e.podCIDR}})
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
	return []string{"agent", "--join", fmt.Sprintf("https://127.0.0.1:%d", e.server.HTTPSPort),
		"--node-ip", "127.0.0.1", "--kubelet-port", strconv.Itoa(e.kubeletPort),
		"--data-dir", e.dataDir, "--node-name", e.node, "--node-label", "e2e=yes", "--cluster-cidr", e.podCIDR,
		"--bridge-name", e.bridge, "--containerd-state-dir", filepath.Join(e.stateBase, "containerd"),
		"--containerd-namespace", e.ns, "--cgroup-root", e.cgroupRoot, "--netns-prefix", e.netnsPfx,
		"--iptables-chain-prefix", e.chainPfx, "--fifo-dir", filepath.Join(e.stateBase, "fifo"), "--sync-frequency", "3s", "--debug"}
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
	lines := strings.Split(e.agentLog(), "\n")
	if len(lines) > 150 {
		lines = lines[len(lines)-150:]
	}
	e.t.Logf("agent output (last lines):\n%s", strings.Join(lines, "\n"))
	if e.server != nil {
		e.t.Logf("server output:\n%s", e.server.Output())
	}
}

// cleanup removes everything the agent and its containers made.
func (e *agentEnv) cleanup() {
	e.dumpLog()
	e.stopAgent()
	killProcs(e.t, func(pid int, cmdline string) bool {
		return strings.Contains(cmdline, e.stateBase) || inCgroup(pid, "/"+e.cgroupRoot+"/")
	})
	unmountUnder(e.t, e.stateBase, e.dataDir, filepath.Join("/run/netns", e.netnsPfx))
	if m, _ := filepath.Glob(filepath.Join("/run/netns", e.netnsPfx+"*")); len(m) > 0 {
		for _, p := range m {
			_ = os.Remove(p)
		}
	}
	if l, err := netlink.LinkByName(e.bridge); err == nil {
		_ = netlink.LinkDel(l)
	}
	ipam := filepath.Join(e.dataDir, "cleanup-ipam")
	_ = os.MkdirAll(ipam, 0o700)
	if m, err := network.New(zaptest.NewLogger(e.t), network.Config{BridgeName: e.bridge, PodCIDR: e.podCIDR, ClusterCIDR: e.podCIDR,
		IPAMDir: ipam, NetnsPrefix: e.netnsPfx, NATChain: e.chainPfx + "POSTROUTING", FilterChain: e.chainPfx + "FORWARD"}); err == nil {
		if err := m.Cleanup(); err != nil {
			e.t.Logf("iptables cleanup: %v", err)
		}
		_ = m.Close()
	}
	for _, dir := range cgroupDirs(e.cgroupRoot) {
		if err := rmdirTree(dir); err != nil {
			e.t.Logf("cgroup cleanup: %v", err)
		}
	}
	_ = os.RemoveAll(e.stateBase)
	_ = os.RemoveAll(e.dataDir)
}

func killProcs(t *testing.T, match func(pid int, cmdline string) bool) {
	for round := 0; round < 20; round++ {
		entries, _ := os.ReadDir("/proc")
		found := 0
		for _, ent := range entries {
			pid, err := strconv.Atoi(ent.Name())
			if err != nil || pid == os.Getpid() {
				continue
			}
			b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
			if err != nil {
				continue
			}
			if match(pid, strings.ReplaceAll(string(b), "\x00", " ")) {
				found++
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		}
		if found == 0 {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Logf("cleanup: processes still alive after SIGKILL")
}

func inCgroup(pid int, part string) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cgroup", pid))
	return err == nil && strings.Contains(string(b), part)
}

// mountsUnder lists mount points starting with any prefix, deepest first.
func mountsUnder(prefixes ...string) []string {
	data, _ := os.ReadFile("/proc/self/mountinfo")
	var out []string
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		if len(f) < 5 {
			continue
		}
		for _, p := range prefixes {
			if strings.HasPrefix(f[4], p) {
				out = append(out, f[4])
				break
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return len(out[i]) > len(out[j]) })
	return out
}

func unmountUnder(t *testing.T, prefixes ...string) {
	for _, m := range mountsUnder(prefixes...) {
		if err := unix.Unmount(m, unix.MNT_DETACH); err != nil && !errors.Is(err, unix.EINVAL) && !errors.Is(err, unix.ENOENT) {
			t.Logf("cleanup: unmount %s: %v", m, err)
		}
	}
}

// cgroupDirs are the test's cgroup root in every mounted hierarchy.
func cgroupDirs(root string) []string {
	data, _ := os.ReadFile("/proc/self/mountinfo")
	var out []string
	for _, line := range strings.Split(string(data), "\n") {
		pre, post, ok := strings.Cut(line, " - ")
		f, tail := strings.Fields(pre), strings.Fields(post)
		if ok && len(f) >= 5 && len(tail) >= 1 && (tail[0] == "cgroup" || tail[0] == "cgroup2") {
			if _, err := os.Stat(filepath.Join(f[4], root)); err == nil {
				out = append(out, filepath.Join(f[4], root))
			}
		}
	}
	return out
}

func rmdirTree(dir string) error {
	var dirs []string
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			dirs = append(dirs, p)
		}
		return nil
	})
	sort.Slice(dirs, func(i, j int) bool { return len(dirs[i]) > len(dirs[j]) })
	var errs []error
	for _, d := range dirs {
		for i := 0; ; i++ {
			err := os.Remove(d)
			if err == nil || errors.Is(err, fs.ErrNotExist) {
				break
			}
			if i == 20 {
				errs = append(errs, err)
				break
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	return errors.Join(errs...)
}

// podCgroups lists pod cgroup dirs left under the test's root.
func podCgroups(root string) []string {
	var out []string
	for _, dir := range cgroupDirs(root) {
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
