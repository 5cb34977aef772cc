package server

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/orch/orch/internal/pki"
)

// raftID returns this server's Raft node ID, created once as
// <hostname>-<random> and kept in path so restarts rejoin as the same voter.
func raftID(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err == nil && len(strings.TrimSpace(string(b))) > 0 {
		return strings.TrimSpace(string(b)), nil
	}
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("reading raft node id: %w", err)
	}
	host, _ := os.Hostname()
	if host == "" {
		host = "orch"
	}
	rnd := make([]byte, 4)
	if _, err := rand.Read(rnd); err != nil {
		return "", fmt.Errorf("raft node id: %w", err)
	}
	id := host + "-" + hex.EncodeToString(rnd)
	if err := os.WriteFile(path, []byte(id+"\n"), 0o600); err != nil {
		return "", fmt.Errorf("writing raft node id: %w", err)
	}
	return id, nil
}

// apiURL is the address written into the admin kubeconfig: loopback when the
// server listens on every address (as k3s does), else the bind address.
func apiURL(cfg Config, p *Parsed) string {
	host := "127.0.0.1"
	if !p.Bind.IsUnspecified() {
		host = p.Bind.String()
	}
	return "https://" + net.JoinHostPort(host, strconv.Itoa(cfg.HTTPSListenPort))
}

func writeKubeconfig(cfg Config, p *Parsed, bundle *pki.Bundle) error {
	if cfg.WriteKubeconfig == "" {
		return nil
	}
	err := pki.WriteKubeconfig(cfg.WriteKubeconfig, cfg.WriteKubeconfigMode, apiURL(cfg, p),
		bundle.CAPEM(), bundle.AdminCertPEM(), bundle.AdminKeyPEM())
	if err != nil {
		return fmt.Errorf("writing kubeconfig: %w", err)
	}
	return nil
}

// announce tells the operator the server is ready and how to use it. The
// join token is not printed: it is a secret kept in the data dir.
func announce(log *zap.Logger, cfg Config, took time.Duration) {
	tokenPath := filepath.Join(cfg.DataDir, "server", "token")
	log.Info("orch server is ready", zap.Duration("startup", took.Round(time.Millisecond)),
		zap.String("kubeconfig", cfg.WriteKubeconfig))
	fmt.Fprintf(os.Stderr, "\norch server is ready.\n"+
		"  kubeconfig:  %[1]s (mode %#o)\n"+
		"  use it:      KUBECONFIG=%[1]s kubectl get namespaces\n"+
		"  join token:  %[3]s (read it as root)\n\n",
		cfg.WriteKubeconfig, cfg.WriteKubeconfigMode, tokenPath)
}

// servePprof serves net/http/pprof on a loopback address for profiling. It
// refuses any non-loopback address: profiles expose memory contents.
func servePprof(addr string, log *zap.Logger) (stop func()) {
	if addr == "" {
		return func() {}
	}
	host, _, err := net.SplitHostPort(addr)
	if ip := net.ParseIP(host); err != nil || ip == nil || !ip.IsLoopback() {
		log.Warn("not serving pprof: --pprof-address must be a loopback host:port", zap.String("address", addr))
		return func() {}
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	srv := &http.Server{Addr: addr, Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() {
		if err := srv.ListenAndServe(); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Warn("pprof server", zap.Error(err))
		}
	}()
	return func() { _ = srv.Close() }
}
