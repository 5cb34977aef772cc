package etcdtest

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// Binary finds etcd, running scripts/install-etcd.sh (Debian's etcd-server
// package) when it is not installed.
func Binary() (string, error) {
	if p, err := exec.LookPath("etcd"); err == nil {
		return p, nil
	}
	root, err := repoRoot()
	if err != nil {
		return "", err
	}
	script := filepath.Join(root, "scripts", "install-etcd.sh")
	if out, err := exec.Command("sh", script).CombinedOutput(); err != nil {
		return "", fmt.Errorf("etcd is not installed and %s failed: %w\n%s", script, err, out)
	}
	p, err := exec.LookPath("etcd")
	if err != nil {
		return "", fmt.Errorf("etcd still missing after %s: %w", script, err)
	}
	return p, nil
}

// repoRoot walks up from the working directory to the directory holding
// scripts/install-etcd.sh.
func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "scripts", "install-etcd.sh")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("etcd is not installed and scripts/install-etcd.sh was not found above the working directory")
		}
		dir = parent
	}
}

func clientTLS(caFile, certFile, keyFile string) (*tls.Config, error) {
	pem, err := os.ReadFile(caFile)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(pem)
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return nil, err
	}
	return &tls.Config{MinVersion: tls.VersionTLS12, RootCAs: pool, Certificates: []tls.Certificate{cert}}, nil
}
