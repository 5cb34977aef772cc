package testutil

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/orch/orch/internal/childproc"
)

// Options tune one test server.
type Options struct {
	// Debug passes --debug.
	Debug bool
	// ExtraArgs are appended to the `orch server` command line.
	ExtraArgs []string
	// Env adds KEY=VALUE pairs to the child's environment.
	Env []string
	// ReadyTimeout bounds the wait for /readyz (default 3 minutes: CI is a
	// shared 2-core VM).
	ReadyTimeout time.Duration
	// DefaultContentType leaves client-go's content type alone (client-go
	// v0.37 then sends protobuf for built-in types). By default Config asks
	// for JSON, the wire format orch promises.
	DefaultContentType bool
	// DefaultKubeconfigMode leaves out --write-kubeconfig-mode so the
	// server's default applies.
	DefaultKubeconfigMode bool
	// ViaEnv passes the settings as ORCH_<FLAG> environment variables
	// instead of flags (the command line is just `orch server`).
	ViaEnv bool
	// KeepOutput keeps every output line for Output (default: the last 200).
	KeepOutput bool
	// Quiet stops streaming the server's output to t.Log (it is still kept
	// and printed when the server fails to become ready).
	Quiet bool
	// Prepare, when set, is called with the empty data dir before the first
	// start (to seed it, e.g. with another server's CA).
	Prepare func(dataDir string) error
}

// Server is one running `orch server` child process.
type Server struct {
	t       testing.TB
	opts    Options
	bin     string
	DataDir string
	// Kubeconfig is the admin kubeconfig the server writes (mode 0600).
	Kubeconfig string
	HTTPSPort  int
	RaftPort   int
	// Config and Clientset talk to the server as admin; they are refreshed
	// by Restart.
	Config    *rest.Config
	Clientset kubernetes.Interface

	configFile string

	mu      sync.Mutex
	proc    *proc
	lastOut *lineLog // output of the latest process, kept after it exits
}

// StartServer starts `orch server` with a fresh data dir and kubeconfig on
// free loopback ports and waits until /readyz answers 200. The process is
// killed and its directories removed in t.Cleanup.
func StartServer(t testing.TB, opts Options) *Server {
	t.Helper()
	if opts.ReadyTimeout == 0 {
		opts.ReadyTimeout = 3 * time.Minute
	}
	bin := Binary(t)
	opts.ExtraArgs = append(datastoreArgs(t), opts.ExtraArgs...)
	base, err := os.MkdirTemp("", "orch-test-")
	if err != nil {
		t.Fatalf("temp dir: %v", err)
	}
	ports := FreePorts(t, 2)
	// An empty config file of our own, so a machine's /etc/orch/config.yaml
	// (the default --config) cannot change the test server.
	cfgFile := filepath.Join(base, "config.yaml")
	if err := os.WriteFile(cfgFile, nil, 0o600); err != nil {
		t.Fatalf("writing %s: %v", cfgFile, err)
	}
	s := &Server{
		t: t, opts: opts, bin: bin,
		configFile: cfgFile,
		DataDir:    filepath.Join(base, "data"),
		Kubeconfig: filepath.Join(base, "kubeconfig.yaml"),
		HTTPSPort:  ports[0],
		RaftPort:   ports[1],
	}
	t.Cleanup(func() {
		s.Kill()
		_ = os.RemoveAll(base)
	})
	if opts.Prepare != nil {
		if err := opts.Prepare(s.DataDir); err != nil {
			t.Fatalf("preparing %s: %v", s.DataDir, err)
		}
	}
	s.start()
	return s
}

// Args returns the command line (after the binary) the server runs with.
func (s *Server) Args() []string {
	args := []string{"server",
		"--config", s.configFile,
		"--data-dir", s.DataDir,
		"--https-listen-port", strconv.Itoa(s.HTTPSPort),
		"--bind-address", "127.0.0.1",
		"--advertise-address", "127.0.0.1",
		"--raft-port", strconv.Itoa(s.RaftPort),
		"--write-kubeconfig", s.Kubeconfig,
		"--disable-agent",
	}
	if !s.opts.DefaultKubeconfigMode {
		args = append(args, "--write-kubeconfig-mode", "0600")
	}
	if s.opts.Debug {
		args = append(args, "--debug")
	}
	return append(args, s.opts.ExtraArgs...)
}

// envArgs turns `--flag value` / `--flag` arguments into ORCH_FLAG=value.
func envArgs(args []string) []string {
	var env []string
	for i := 0; i < len(args); i++ {
		name, ok := strings.CutPrefix(args[i], "--")
		if !ok {
			continue
		}
		key := "ORCH_" + strings.ToUpper(strings.ReplaceAll(name, "-", "_"))
		if k, v, found := strings.Cut(key, "="); found {
			env = append(env, k+"="+v)
		} else if i+1 < len(args) && !strings.HasPrefix(args[i+1], "--") {
			env = append(env, key+"="+args[i+1])
			i++
		} else {
			env = append(env, key+"=true")
		}
	}
	return env
}

func (s *Server) start() {
	s.t.Helper()
	args, opts := s.Args(), s.opts
	if opts.ViaEnv {
		opts.Env = append(envArgs(args[1:]), opts.Env...)
		args = args[:1]
	}
	p, err := startProc(s.t, s.bin, args, opts)
	if err != nil {
		s.t.Fatalf("starting orch server: %v", err)
	}
	s.mu.Lock()
	s.proc, s.lastOut = p, p.out
	s.mu.Unlock()
	if err := s.waitReady(p); err != nil {
		s.Kill()
		s.t.Fatalf("orch server did not become ready: %v\n--- server output (tail) ---\n%s", err, p.out.tail())
	}
}

// Stop sends SIGTERM to the server's process group and waits for it to exit
// (SIGKILL after 30s). It returns the process's exit error, if any.
func (s *Server) Stop() error {
	p := s.take()
	if p == nil {
		return nil
	}
	return p.stop(30 * time.Second)
}

// Kill sends SIGKILL to the server's process group and waits for it to exit.
func (s *Server) Kill() {
	if p := s.take(); p != nil {
		p.kill()
	}
}

// Restart stops the server (SIGTERM) if running and starts it again on the
// same data dir, ports and kubeconfig path, then refreshes Config/Clientset.
func (s *Server) Restart() {
	s.t.Helper()
	if err := s.Stop(); err != nil {
		s.t.Logf("orch server exited with %v on stop", err)
	}
	s.start()
}

// Running reports whether the process is alive.
func (s *Server) Running() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.proc != nil && !s.proc.exited()
}

// Output returns the last lines the latest process printed (all of them
// with Options.KeepOutput), also after it exited.
func (s *Server) Output() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.lastOut == nil {
		return ""
	}
	return s.lastOut.tail()
}

func (s *Server) take() *proc {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.proc
	s.proc = nil
	return p
}

func (s *Server) waitReady(p *proc) error {
	ctx, cancel := context.WithTimeout(context.Background(), s.opts.ReadyTimeout)
	defer cancel()
	var last error
	for {
		if p.exited() {
			return fmt.Errorf("process exited before ready: %w", p.waitErr)
		}
		cfg, err := s.loadConfig()
		if err == nil {
			err = readyz(ctx, cfg)
			if err == nil {
				cs, err := kubernetes.NewForConfig(cfg)
				if err != nil {
					return fmt.Errorf("clientset: %w", err)
				}
				s.mu.Lock()
				s.Config, s.Clientset = cfg, cs
				s.mu.Unlock()
				return nil
			}
		}
		last = err
		select {
		case <-ctx.Done():
			return fmt.Errorf("timed out after %v; last error: %v", s.opts.ReadyTimeout, last)
		case <-p.done:
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// loadConfig reads the kubeconfig the server wrote, with client-side rate
// limiting off so tests are not throttled.
func (s *Server) loadConfig() (*rest.Config, error) {
	if _, err := os.Stat(s.Kubeconfig); err != nil {
		return nil, fmt.Errorf("kubeconfig not written yet: %w", err)
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", s.Kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("loading kubeconfig %s: %w", s.Kubeconfig, err)
	}
	cfg.QPS, cfg.Burst = -1, 0
	cfg.Timeout = 60 * time.Second
	if !s.opts.DefaultContentType {
		cfg.ContentType = "application/json"
		cfg.AcceptContentTypes = "application/json"
	}
	return cfg, nil
}

func readyz(ctx context.Context, cfg *rest.Config) error {
	c := rest.CopyConfig(cfg)
	c.Timeout = 5 * time.Second
	rc, err := rest.UnversionedRESTClientFor(withCodec(c))
	if err != nil {
		return fmt.Errorf("rest client: %w", err)
	}
	var code int
	body, err := rc.Get().AbsPath("/readyz").Do(ctx).StatusCode(&code).Raw()
	if err != nil {
		return fmt.Errorf("GET /readyz: %w", err)
	}
	if code != 200 {
		return fmt.Errorf("GET /readyz: %d %s", code, strings.TrimSpace(string(body)))
	}
	return nil
}

// proc is one child process with its output streamed to the test log.
type proc struct {
	cmd     *exec.Cmd
	out     *lineLog
	done    chan struct{}
	waitErr error
}

func startProc(t testing.TB, bin string, args []string, opts Options) (*proc, error) {
	cmd := exec.Command(bin, args...)
	cmd.Env = append(childEnv(), opts.Env...)
	// Own process group (killed as a whole); SIGKILL if the test binary dies
	// without running its cleanups (e.g. on a go test timeout).
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	out := newLineLog(t, opts.Quiet, opts.KeepOutput)
	cmd.Stdout, cmd.Stderr = out, out
	cmd.WaitDelay = 10 * time.Second
	t.Logf("starting %s %s %s", strings.Join(opts.Env, " "), bin, strings.Join(args, " "))
	waited, err := childproc.Start(cmd)
	if err != nil {
		return nil, fmt.Errorf("exec %s: %w", bin, err)
	}
	p := &proc{cmd: cmd, out: out, done: make(chan struct{})}
	go func() {
		p.waitErr = <-waited
		out.close()
		close(p.done)
	}()
	return p, nil
}

// childEnv is our environment without ORCH_* variables, so a developer's
// settings cannot leak into the server's flags.
func childEnv() []string { return ChildEnv() }

// ChildEnv is the test's environment without ORCH_* variables and those
// starting with any of the extra prefixes, for the processes a test
// starts.
func ChildEnv(extraPrefixes ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		drop := strings.HasPrefix(kv, "ORCH_")
		for _, p := range extraPrefixes {
			drop = drop || strings.HasPrefix(kv, p)
		}
		if !drop {
			env = append(env, kv)
		}
	}
	return env
}

func (p *proc) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

func (p *proc) signal(sig syscall.Signal) {
	if p.cmd.Process == nil {
		return
	}
	// Negative pid: the whole process group (Setpgid above).
	if err := syscall.Kill(-p.cmd.Process.Pid, sig); err != nil && !errors.Is(err, syscall.ESRCH) {
		_ = p.cmd.Process.Signal(sig)
	}
}

func (p *proc) kill() {
	p.signal(syscall.SIGKILL)
	<-p.done
}

func (p *proc) stop(grace time.Duration) error {
	p.signal(syscall.SIGTERM)
	select {
	case <-p.done:
		return p.waitErr
	case <-time.After(grace):
		p.kill()
		return fmt.Errorf("did not exit %v after SIGTERM; killed", grace)
	}
}
