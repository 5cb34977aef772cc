package etcdtest

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/orch/orch/internal/childproc"
)

// Etcd is one running test etcd.
type Etcd struct {
	Endpoint string // https://127.0.0.1:port
	// CAFile, CertFile and KeyFile are what a client needs
	// (--datastore-cafile, --datastore-certfile, --datastore-keyfile).
	CAFile, CertFile, KeyFile string
	dir                       string
	cmd                       *exec.Cmd
	logFile                   string
	stop                      func()
}

// Kill stops etcd at once (SIGKILL), as a crash or a network cut would.
func (e *Etcd) Kill() { e.stop() }

// Start runs etcd until the test ends, installing it first when missing.
func Start(t testing.TB) *Etcd {
	t.Helper()
	bin, err := Binary()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	certs, err := writeCerts(dir)
	if err != nil {
		t.Fatalf("etcd certificates: %v", err)
	}
	for attempt := 1; ; attempt++ {
		e, err := start(t, bin, dir, certs, attempt)
		if err == nil {
			return e
		}
		if attempt == 3 {
			t.Fatal(err)
		}
		t.Logf("etcd start attempt %d: %v", attempt, err)
	}
}

// TLS is the client TLS configuration for e.
func (e *Etcd) TLS(t testing.TB) *tls.Config {
	t.Helper()
	cfg, err := clientTLS(e.CAFile, e.CertFile, e.KeyFile)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// Log is etcd's output so far.
func (e *Etcd) Log() string {
	b, _ := os.ReadFile(e.logFile)
	return string(b)
}

func start(t testing.TB, bin, dir string, certs certFiles, attempt int) (*Etcd, error) {
	ports, err := freePorts(2)
	if err != nil {
		return nil, err
	}
	client := fmt.Sprintf("https://127.0.0.1:%d", ports[0])
	peer := fmt.Sprintf("http://127.0.0.1:%d", ports[1])
	data := filepath.Join(dir, fmt.Sprintf("data-%d", attempt))
	e := &Etcd{Endpoint: client, CAFile: certs.CA, CertFile: certs.ClientCert, KeyFile: certs.ClientKey,
		dir: dir, logFile: filepath.Join(dir, fmt.Sprintf("etcd-%d.log", attempt))}
	log, err := os.Create(e.logFile)
	if err != nil {
		return nil, err
	}
	defer log.Close()
	e.cmd = exec.Command(bin, "--name", "test", "--data-dir", data,
		"--listen-client-urls", client, "--advertise-client-urls", client,
		"--listen-peer-urls", peer, "--initial-advertise-peer-urls", peer,
		"--initial-cluster", "test="+peer, "--initial-cluster-state", "new",
		"--cert-file", certs.ServerCert, "--key-file", certs.ServerKey,
		"--trusted-ca-file", certs.CA, "--client-cert-auth",
		"--logger", "zap", "--log-outputs", "stderr")
	e.cmd.Stdout, e.cmd.Stderr = log, log
	e.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
	waited, err := childproc.Start(e.cmd)
	if err != nil {
		return nil, fmt.Errorf("starting %s: %w", bin, err)
	}
	exited := make(chan struct{})
	go func() { <-waited; close(exited) }()
	stop := func() {
		_ = e.cmd.Process.Kill()
		<-exited
		_ = os.RemoveAll(data)
	}
	e.stop = stop
	if err := e.waitReady(exited); err != nil {
		stop()
		return nil, fmt.Errorf("%w\netcd output:\n%s", err, tail(e.Log(), 30))
	}
	t.Cleanup(stop)
	return e, nil
}

// waitReady polls etcd with a real TLS client until a read works.
func (e *Etcd) waitReady(exited <-chan struct{}) error {
	tlsCfg, err := clientTLS(e.CAFile, e.CertFile, e.KeyFile)
	if err != nil {
		return err
	}
	c, err := clientv3.New(clientv3.Config{Endpoints: []string{e.Endpoint}, TLS: tlsCfg, DialTimeout: 2 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		return err
	}
	defer c.Close()
	deadline := time.Now().Add(30 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		_, err := c.Get(ctx, "health")
		cancel()
		if err == nil {
			return nil
		}
		select {
		case <-exited:
			return errors.New("etcd exited during start")
		default:
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("etcd not ready within 30s: %w", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func freePorts(n int) ([]int, error) {
	var ports []int
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		defer l.Close()
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
