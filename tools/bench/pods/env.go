package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"go.uber.org/zap"
	"k8s.io/client-go/kubernetes"

	"github.com/orch/orch/internal/hostnames"
)

// env is the benchmark's private corner of the host: every name the agent
// and the baseline touch (bridge, netns prefix, iptables chains, cgroup
// roots, containerd namespaces and state dir) carries a random id, as
// test/e2e does, so cleanup can find exactly what the run made.
type env struct {
	log        *zap.Logger
	id         string
	work       string // scratch dir: server and agent data dirs, logs, image tar
	node       string
	stateBase  string // /run/orchb-<id>: containerd state, fifos
	bridge     string
	netnsPfx   string
	chainPfx   string
	cgroupRoot string // the agent's pods
	baseCgroup string // the baseline's containers
	ns         string // the agent's containerd namespace
	baseNS     string // the baseline's containerd namespace
	podCIDR    string
	dnsLink    string // the in-process agent's cluster DNS link (single-process mode)
	single     bool   // `orch server` runs its own agent (the default), no separate `orch agent`
	pprofAddr  string // the server's --pprof-address, empty for none

	apiPort, raftPort, kubeletPort int
	kubeconfig                     string
	server, agent                  *child

	cs   kubernetes.Interface // set once the server is ready
	base *baseline
	pw   *podWatcher
}

func newEnv(log *zap.Logger, work string, single bool) (*env, error) {
	b := make([]byte, 3)
	if _, err := rand.Read(b); err != nil {
		return nil, err
	}
	id := hex.EncodeToString(b)
	e := &env{log: log, id: id, work: work, node: "bench-" + id, stateBase: "/run/orchb-" + id,
		bridge: "orchb" + id, netnsPfx: "orchb" + id + "-", chainPfx: "ORCHB" + strings.ToUpper(id) + "-",
		cgroupRoot: "orchb-" + id, baseCgroup: "orchb-" + id + "-base", ns: "orchb-" + id, baseNS: "orchb-" + id + "-base",
		podCIDR: fmt.Sprintf("10.245.%d.0/24", 1+int(b[0])%250)}
	e.kubeconfig = filepath.Join(work, "orch.yaml")
	if single {
		e.useServerNames()
	}
	for _, p := range []*int{&e.apiPort, &e.raftPort, &e.kubeletPort} {
		port, err := freePort()
		if err != nil {
			return nil, err
		}
		*p = port
	}
	return e, nil
}

// useServerNames takes the host names `orch server` derives from its
// --data-dir for its own agent (`orch host-names`): the sweep then finds
// exactly what the in-process agent made.
func (e *env) useServerNames() {
	n := hostnames.For(e.serverDir())
	e.single, e.node, e.stateBase, e.bridge, e.dnsLink = true, "bench-"+e.id, n.RunDir, n.Bridge, n.DNSLink
	e.netnsPfx, e.chainPfx, e.cgroupRoot, e.ns = n.NetnsPrefix, n.ChainPrefix, n.CgroupRoot, "orch"
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func (e *env) serverDir() string { return filepath.Join(e.work, "server") }
func (e *env) agentDir() string  { return filepath.Join(e.work, "agent") }
func (e *env) containerdSock() string {
	return filepath.Join(e.stateBase, "containerd", "containerd.sock")
}
func (e *env) imageDir() string {
	if e.single {
		return filepath.Join(e.serverDir(), "agent", "images")
	}
	return filepath.Join(e.agentDir(), "agent", "images")
}

// startServer runs `orch server` on loopback ports: with its own agent
// (single-process mode: the node names derive from its data dir, host-gw
// so no VXLAN device, no ingress ports, a service range of its own), or
// with --disable-agent.
func (e *env) startServer(bin string) error {
	args := []string{"server", "--data-dir", e.serverDir(), "--bind-address", "127.0.0.1",
		"--advertise-address", "127.0.0.1", "--https-listen-port", strconv.Itoa(e.apiPort),
		"--raft-port", strconv.Itoa(e.raftPort), "--write-kubeconfig", e.kubeconfig,
		"--cluster-cidr", e.podCIDR}
	if e.single {
		args = append(args, "--node-name", e.node, "--kubelet-port", strconv.Itoa(e.kubeletPort),
			"--network-backend", "host-gw", "--service-cidr", "10.246.0.0/16", "--cluster-dns", "10.246.0.10",
			"--ingress-http-port", "0", "--ingress-https-port", "0",
			"--private-registry", filepath.Join(e.work, "no-registries.yaml"),
			"--eviction-hard", "nodefs.available<1%,imagefs.available<1%")
	} else {
		args = append(args, "--disable-agent")
	}
	if e.pprofAddr != "" {
		args = append(args, "--pprof-address", e.pprofAddr)
	}
	c, err := startChild("server", filepath.Join(e.work, "server.log"), bin, args, nil)
	e.server = c
	return err
}

// startAgent runs `orch agent` with the hidden isolation flags (as test/e2e).
func (e *env) startAgent(bin string) error {
	tok, err := os.ReadFile(filepath.Join(e.serverDir(), "server", "token"))
	if err != nil {
		return fmt.Errorf("read join token: %w", err)
	}
	args := []string{"agent", "--join", fmt.Sprintf("https://127.0.0.1:%d", e.apiPort),
		"--node-ip", "127.0.0.1", "--kubelet-port", strconv.Itoa(e.kubeletPort),
		"--data-dir", e.agentDir(), "--node-name", e.node, "--cluster-cidr", e.podCIDR,
		"--bridge-name", e.bridge, "--containerd-state-dir", filepath.Join(e.stateBase, "containerd"),
		"--containerd-namespace", e.ns, "--cgroup-root", e.cgroupRoot, "--netns-prefix", e.netnsPfx,
		"--iptables-chain-prefix", e.chainPfx, "--fifo-dir", filepath.Join(e.stateBase, "fifo")}
	c, err := startChild("agent", filepath.Join(e.work, "agent.log"), bin, args,
		[]string{"ORCH_TOKEN=" + strings.TrimSpace(string(tok))})
	e.agent = c
	return err
}

// child is a started process in its own process group, SIGKILLed by the
// kernel if the benchmark dies.
type child struct {
	name string
	cmd  *exec.Cmd
	done chan struct{}
}

func startChild(name, logPath, bin string, args, extraEnv []string) (*child, error) {
	out, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open %s log: %w", name, err)
	}
	defer out.Close()
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), extraEnv...)
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	c := &child{name: name, cmd: cmd, done: make(chan struct{})}
	go func() { _ = cmd.Wait(); close(c.done) }()
	return c, nil
}

func (c *child) pid() int { return c.cmd.Process.Pid }

func (c *child) exited() bool {
	select {
	case <-c.done:
		return true
	default:
		return false
	}
}

// stop sends SIGTERM to the process, then SIGKILL to its group after grace.
func (c *child) stop(grace time.Duration) {
	if c == nil {
		return
	}
	_ = c.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-c.done:
	case <-time.After(grace):
	}
	_ = syscall.Kill(-c.pid(), syscall.SIGKILL)
	<-c.done
}

// waitFor polls cond every 100 ms until it is true or ctx ends.
func waitFor(ctx context.Context, timeout time.Duration, what string, cond func() (bool, error)) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var last error
	for {
		ok, err := cond()
		if ok {
			return nil
		}
		last = err
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for %s: %w (last error: %v)", what, ctx.Err(), last)
		case <-time.After(100 * time.Millisecond):
		}
	}
}
