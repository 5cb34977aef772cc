package servers

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/orch/orch/tools/bench/internal/certs"
	"github.com/orch/orch/tools/bench/internal/proc"
)

// kineParams are kine's own SQLite defaults (WAL, synchronous=NORMAL), as k3s runs it.
const kineParams = "_journal_mode=WAL&_busy_timeout=30000&_synchronous=NORMAL&_txlock=immediate&_stmt_cache_size=20&cache=shared"

// BaselineBins are the prebuilt baseline binaries.
type BaselineBins struct {
	KubeAPIServer string
	Kine          string
}

// StartBaseline starts kine (SQLite in dir) and kube-apiserver on loopback
// ports, with generated certificates, and waits for /readyz.
func StartBaseline(ctx context.Context, dir string, bins BaselineBins) (*Server, error) {
	kinePort, err := freePort()
	if err != nil {
		return nil, err
	}
	apiPort, err := freePort()
	if err != nil {
		return nil, err
	}
	pki, err := certs.Generate(dir, "https://"+hostPort(apiPort))
	if err != nil {
		return nil, fmt.Errorf("baseline certificates: %w", err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "db"), 0o700); err != nil {
		return nil, fmt.Errorf("baseline db dir: %w", err)
	}
	s := &Server{Name: "baseline", Kubeconfig: pki.Kubeconfig}
	kineLog := filepath.Join(dir, "kine.log")
	kine, err := proc.Start("kine", kineLog, bins.Kine,
		"--listen-address", hostPort(kinePort),
		"--endpoint", "sqlite://"+filepath.Join(dir, "db", "state.db")+"?"+kineParams,
		"--metrics-bind-address", "0",
	)
	if err != nil {
		return nil, err
	}
	s.Procs = append(s.Procs, kine)
	if err := waitTCP(ctx, hostPort(kinePort), kine, 30*time.Second); err != nil {
		return s, fmt.Errorf("%w\n--- kine log ---\n%s", err, tail(kineLog, 3000))
	}
	apiLog := filepath.Join(dir, "kube-apiserver.log")
	api, err := proc.Start("kube-apiserver", apiLog, bins.KubeAPIServer, apiserverArgs(dir, pki, apiPort, kinePort)...)
	if err != nil {
		return s, err
	}
	s.Procs = append(s.Procs, api)
	s.Ready, err = waitReady(ctx, pki.Kubeconfig, apiLog, api, kine.Started, 3*time.Minute)
	return s, err
}

func apiserverArgs(dir string, pki *certs.Bundle, apiPort, kinePort int) []string {
	return []string{
		"--advertise-address=127.0.0.1",
		"--bind-address=127.0.0.1",
		"--secure-port=" + strconv.Itoa(apiPort),
		"--etcd-servers=http://" + hostPort(kinePort),
		"--cert-dir=" + filepath.Join(dir, "apiserver-certs"),
		"--tls-cert-file=" + pki.ServerCert,
		"--tls-private-key-file=" + pki.ServerKey,
		"--client-ca-file=" + pki.CAFile,
		"--anonymous-auth=false",
		"--authorization-mode=AlwaysAllow",
		"--service-account-key-file=" + pki.SAPub,
		"--service-account-signing-key-file=" + pki.SAKey,
		"--service-account-issuer=https://kubernetes.default.svc",
		"--service-cluster-ip-range=10.43.0.0/16",
		// Endpoints may not hold loopback IPs; there is no node network here.
		"--endpoint-reconciler-type=none",
		"--enable-priority-and-fairness=true",
		"--profiling=false",
	}
}
