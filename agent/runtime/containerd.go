package runtime

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	containerd "github.com/containerd/containerd/v2/client"
	"go.uber.org/zap"

	"github.com/orch/orch/internal/memtune"
)

// Defaults for the containerd that the agent runs itself.
const (
	DefaultStateDir  = "/run/orch/containerd"
	DefaultNamespace = "orch"
	socketName       = "containerd.sock"
	pidFileName      = "orch-containerd.pid"
	// DefaultAddress is the gRPC socket of a managed containerd with the
	// default state dir (what `orch ctr` talks to by default).
	DefaultAddress = DefaultStateDir + "/" + socketName
)

// ManagedConfig says where a managed containerd keeps its files.
type ManagedConfig struct {
	RootDir  string // persistent: <data-dir>/agent/containerd/root
	StateDir string // tmpfs: /run/orch/containerd (socket, shim state, fifos)
	Binary   string // default: "containerd" from PATH
	LogLevel string // containerd's own level; default "warn"
	// StopTimeout is how long Stop waits after SIGTERM before SIGKILL.
	StopTimeout time.Duration
	// SettleAfter, when set, pages out containerd's start-up-only binary
	// pages that long after each start (memtune.ReleaseProcess): plugin
	// set-up touches most of its code, serving pods a fraction of it.
	SettleAfter time.Duration
}

// DefaultManagedConfig is the layout for an agent with data dir dataDir.
func DefaultManagedConfig(dataDir string) ManagedConfig {
	return ManagedConfig{RootDir: filepath.Join(dataDir, "agent", "containerd", "root"), StateDir: DefaultStateDir}
}

// Managed is a containerd daemon run as a child of the agent. It is
// restarted when it dies and stopped by Stop. Containers survive both: their
// shims are not children of containerd's process lifetime.
type Managed struct {
	log    *zap.Logger
	cfg    ManagedConfig
	config string

	mu       sync.Mutex
	cmd      *exec.Cmd
	exited   chan struct{}
	stopping bool
	done     chan struct{}
}

// Address is the managed containerd's gRPC socket.
func (m *Managed) Address() string { return filepath.Join(m.cfg.StateDir, socketName) }

// StartManaged starts containerd from PATH with the default layout under
// dataDir and waits until its socket answers.
func StartManaged(ctx context.Context, log *zap.Logger, dataDir string) (*Managed, error) {
	return StartManagedConfig(ctx, log, DefaultManagedConfig(dataDir))
}

// StartManagedConfig starts containerd with cfg and waits for its socket.
func StartManagedConfig(ctx context.Context, log *zap.Logger, cfg ManagedConfig) (*Managed, error) {
	if cfg.Binary == "" {
		cfg.Binary = "containerd"
	}
	bin, err := exec.LookPath(cfg.Binary)
	if err != nil {
		return nil, fmt.Errorf("find containerd binary: %w", err)
	}
	cfg.Binary = bin
	if cfg.LogLevel == "" {
		cfg.LogLevel = "warn"
	}
	if cfg.StopTimeout == 0 {
		cfg.StopTimeout = 10 * time.Second
	}
	m := &Managed{log: log.Named("containerd"), cfg: cfg, done: make(chan struct{})}
	if err := m.writeConfig(); err != nil {
		return nil, err
	}
	m.killStale()
	if err := m.start(); err != nil {
		return nil, err
	}
	if err := m.waitReady(ctx); err != nil {
		_ = m.Stop()
		return nil, err
	}
	go m.supervise()
	m.log.Info("containerd started", zap.String("address", m.Address()), zap.String("root", cfg.RootDir))
	return m, nil
}

// configTOML is containerd's config (version 2, read by 1.6 and 1.7): no
// CRI, no snapshotters we do not use, quiet logs, nothing outside RootDir
// and StateDir.
func (m *Managed) configTOML() string {
	return fmt.Sprintf(`version = 2
root = %q
state = %q
disabled_plugins = ["io.containerd.grpc.v1.cri", "io.containerd.snapshotter.v1.btrfs",
  "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.aufs",
  "io.containerd.snapshotter.v1.devmapper", "io.containerd.tracing.processor.v1.otlp",
  "io.containerd.internal.v1.tracing"]

[grpc]
  address = %q

[ttrpc]
  address = %q

[debug]
  level = %q

# containerd's default, /opt/containerd, would be a file outside orch's dirs.
[plugins."io.containerd.internal.v1.opt"]
  path = %q
`, m.cfg.RootDir, m.cfg.StateDir, m.Address(), m.Address()+".ttrpc", m.cfg.LogLevel, filepath.Join(m.cfg.RootDir, "opt"))
}

func (m *Managed) configPath() string { return filepath.Join(m.cfg.StateDir, "config.toml") }

func (m *Managed) writeConfig() error {
	for _, d := range []string{m.cfg.RootDir, m.cfg.StateDir} {
		if err := os.MkdirAll(d, 0o711); err != nil {
			return fmt.Errorf("create containerd dir: %w", err)
		}
	}
	if err := os.WriteFile(m.configPath(), []byte(m.configTOML()), 0o600); err != nil {
		return fmt.Errorf("write containerd config: %w", err)
	}
	return nil
}

// killStale stops a containerd left behind by an agent that died without
// stopping it (its pid file names it and it still runs our config).
func (m *Managed) killStale() {
	b, err := os.ReadFile(filepath.Join(m.cfg.StateDir, pidFileName))
	if err != nil {
		return
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid <= 1 {
		return
	}
	cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil || !strings.Contains(string(cmdline), m.configPath()) {
		return
	}
	m.log.Warn("stopping containerd left by a previous agent", zap.Int("pid", pid))
	_ = syscall.Kill(pid, syscall.SIGTERM)
	for i := 0; i < 100; i++ {
		if syscall.Kill(pid, 0) != nil {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	_ = syscall.Kill(pid, syscall.SIGKILL)
}

func (m *Managed) start() error {
	cmd := exec.Command(m.cfg.Binary, "--config", m.configPath())
	// Own process group: a Ctrl-C aimed at the agent does not reach
	// containerd before the agent stops it in order.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Env = managedEnv(os.Environ())
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return err
	}
	cmd.Stdout = nil
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start containerd: %w", err)
	}
	_ = os.WriteFile(filepath.Join(m.cfg.StateDir, pidFileName), []byte(strconv.Itoa(cmd.Process.Pid)), 0o600)
	exited := make(chan struct{})
	go m.copyLog(stderr)
	go func() { _ = cmd.Wait(); close(exited) }()
	if m.cfg.SettleAfter > 0 {
		go m.settle(cmd.Process.Pid, exited)
	}
	m.mu.Lock()
	m.cmd, m.exited = cmd, exited
	m.mu.Unlock()
	return nil
}

// settle pages out the binary pages of containerd (pid) SettleAfter after
// its start, unless it exited before.
func (m *Managed) settle(pid int, exited <-chan struct{}) {
	t := time.NewTimer(m.cfg.SettleAfter)
	defer t.Stop()
	select {
	case <-exited:
		return
	case <-t.C:
	}
	n, err := memtune.ReleaseProcess(pid)
	if err != nil {
		m.log.Debug("containerd binary pages not released", zap.Error(err))
		return
	}
	m.log.Debug("containerd settled", zap.Int64("binary_bytes_advised", n))
}

// ManagedGCPercent is the Go GC percent of the managed containerd and,
// since containerd hands its environment to the shims it starts, of every
// containerd-shim-runc-v2: a shim's live heap is well under a MiB, and at
// Go's default the heap may grow to 4 MiB before a collection, in each
// shim of each pod.
const ManagedGCPercent = 25

// managedEnv is the managed containerd's environment: the agent's, no
// OpenTelemetry, and GOGC=ManagedGCPercent unless the agent's environment
// sets GOGC.
func managedEnv(env []string) []string {
	out := append(slices.Clone(env), "OTEL_SDK_DISABLED=true")
	if !slices.ContainsFunc(env, func(kv string) bool { return strings.HasPrefix(kv, "GOGC=") }) {
		out = append(out, "GOGC="+strconv.Itoa(ManagedGCPercent))
	}
	return out
}

// copyLog forwards containerd's log lines (already filtered by its level).
func (m *Managed) copyLog(r io.Reader) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.Contains(line, "level=error"), strings.Contains(line, "level=fatal"):
			m.log.Error(line)
		case strings.Contains(line, "shim disconnected"), strings.Contains(line, "cleanup warnings"):
			// Part of every task delete on containerd 1.6 (containerd PR 11815
			// made it info); not worth a warning.
			m.log.Debug(line)
		case strings.Contains(line, "level=warning"):
			m.log.Warn(line)
		default: // shims log their start at info whatever containerd's level
			m.log.Debug(line)
		}
	}
}

func (m *Managed) waitReady(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	m.mu.Lock()
	exited := m.exited
	m.mu.Unlock()
	for {
		if c, err := net.DialTimeout("unix", m.Address(), time.Second); err == nil {
			c.Close()
			return nil
		}
		select {
		case <-exited:
			return errors.New("containerd exited during startup (see its log lines)")
		case <-ctx.Done():
			return fmt.Errorf("wait for containerd socket %s: %w", m.Address(), ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// supervise restarts containerd when it dies, with a growing backoff.
func (m *Managed) supervise() {
	backoff := time.Second
	for {
		m.mu.Lock()
		exited := m.exited
		m.mu.Unlock()
		<-exited
		m.mu.Lock()
		stopping := m.stopping
		m.mu.Unlock()
		if stopping {
			close(m.done)
			return
		}
		m.log.Error("containerd exited; restarting", zap.Duration("backoff", backoff))
		time.Sleep(backoff)
		if backoff < 30*time.Second {
			backoff *= 2
		}
		m.mu.Lock()
		stopping = m.stopping
		m.mu.Unlock()
		if stopping {
			close(m.done)
			return
		}
		if err := m.start(); err != nil {
			m.log.Error("restart containerd", zap.Error(err))
			m.mu.Lock()
			ch := make(chan struct{})
			close(ch)
			m.exited = ch
			m.mu.Unlock()
		}
	}
}

// Stop terminates containerd: SIGTERM, then SIGKILL after StopTimeout.
// Running containers keep running under their shims.
func (m *Managed) Stop() error {
	m.mu.Lock()
	if m.stopping {
		m.mu.Unlock()
		<-m.done
		return nil
	}
	m.stopping = true
	cmd, exited := m.cmd, m.exited
	m.mu.Unlock()
	_ = cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-exited:
	case <-time.After(m.cfg.StopTimeout):
		m.log.Warn("containerd did not stop in time; killing it")
		_ = cmd.Process.Kill()
		<-exited
	}
	_ = os.Remove(filepath.Join(m.cfg.StateDir, pidFileName))
	m.log.Info("containerd stopped")
	return nil
}

// Connect opens a client to the containerd at address and checks that it
// answers.
func Connect(ctx context.Context, address string) (*containerd.Client, error) {
	c, err := containerd.New(address, containerd.WithTimeout(10*time.Second))
	if err != nil {
		return nil, fmt.Errorf("connect to containerd at %s: %w", address, err)
	}
	if _, err := c.Version(ctx); err != nil {
		c.Close()
		return nil, fmt.Errorf("containerd at %s: version: %w", address, err)
	}
	return c, nil
}
