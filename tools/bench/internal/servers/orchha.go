package servers

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/orch/orch/tools/bench/internal/load"
)

// What orch's servers publish in kube-system (server/ha.go): the Raft
// leader renews leaderLease naming its Raft ID and the members; every
// server renews its own lease naming its Raft ID and HTTPS port.
const (
	leaderLease       = "orch-raft-leader"
	membersAnnotation = "orch.io/raft-members"
	raftIDAnnotation  = "orch.io/raft-id"
	portAnnotation    = "orch.io/https-port"
)

// StartOrchCluster starts n `orch server`s on loopback, each with its own
// data dir (dir/s1, dir/s2, ...), API and Raft ports: the first with
// --cluster-init, the others joining it with its token. It returns once
// every server answers /readyz and the leader lists n voters. Ready is the
// time from the first exec to that point; Endpoints are the servers'
// kubeconfigs in start order. On error the started processes are in the
// returned Server (the caller stops them).
func StartOrchCluster(ctx context.Context, dir, bin string, n int) (*Server, error) {
	if n < 1 {
		return nil, fmt.Errorf("cluster of %d servers", n)
	}
	s := &Server{Name: "orch-ha" + strconv.Itoa(n)}
	var first *orchProc
	for i := 1; i <= n; i++ {
		sdir := filepath.Join(dir, "s"+strconv.Itoa(i))
		if err := os.MkdirAll(sdir, 0o700); err != nil {
			return s, err
		}
		extra := []string{"--node-name", "bench-s" + strconv.Itoa(i)}
		if first == nil {
			extra = append(extra, "--cluster-init")
		} else {
			extra = append(extra,
				"--server", "https://"+hostPort(first.apiPort),
				"--token-file", filepath.Join(dir, "s1", "data", "server", "token"))
		}
		o, err := startOrchProc("orch-s"+strconv.Itoa(i), sdir, bin, extra...)
		if err != nil {
			return s, err
		}
		s.Procs = append(s.Procs, o.p)
		s.Endpoints = append(s.Endpoints, o.kubeconfig)
		s.apiPorts = append(s.apiPorts, o.apiPort)
		if first == nil {
			first = o
			s.Kubeconfig = o.kubeconfig
		}
		// A joining server needs the first one up (its token, its API).
		if _, err := waitReady(ctx, o.kubeconfig, o.logPath, o.p, o.p.Started, 2*time.Minute); err != nil {
			return s, err
		}
	}
	if err := waitVoters(ctx, s.Kubeconfig, n, 2*time.Minute); err != nil {
		return s, err
	}
	s.Ready = time.Since(first.p.Started)
	return s, nil
}

// waitVoters waits until the leader lease lists n voters.
func waitVoters(ctx context.Context, kubeconfig string, n int, timeout time.Duration) error {
	cs, err := clientset(kubeconfig)
	if err != nil {
		return err
	}
	deadline := time.Now().Add(timeout)
	for {
		l, err := cs.CoordinationV1().Leases("kube-system").Get(ctx, leaderLease, metav1.GetOptions{})
		got := ""
		if err == nil {
			got = l.Annotations[membersAnnotation]
			if strings.Count(got, "=voter@") == n {
				return nil
			}
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return fmt.Errorf("leader lease does not list %d voters after %s (members %q, last error %v)", n, timeout, got, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// Leader returns the index in Endpoints of the current Raft leader, read
// from the leader lease and the leader's own server lease.
func (s *Server) Leader(ctx context.Context) (int, error) {
	if len(s.apiPorts) == 0 {
		return 0, errors.New("not a cluster")
	}
	cs, err := clientset(s.Kubeconfig)
	if err != nil {
		return 0, err
	}
	leases, err := cs.CoordinationV1().Leases("kube-system").List(ctx, metav1.ListOptions{})
	if err != nil {
		return 0, fmt.Errorf("list leases: %w", err)
	}
	holder := ""
	for _, l := range leases.Items {
		if l.Name == leaderLease && l.Spec.HolderIdentity != nil {
			holder = *l.Spec.HolderIdentity
		}
	}
	if holder == "" {
		return 0, errors.New("no leader lease holder yet")
	}
	for _, l := range leases.Items {
		if l.Name == leaderLease || l.Annotations[raftIDAnnotation] != holder {
			continue
		}
		for i, p := range s.apiPorts {
			if l.Annotations[portAnnotation] == strconv.Itoa(p) {
				return i, nil
			}
		}
	}
	return 0, fmt.Errorf("no server lease for leader %s names one of the ports %v", holder, s.apiPorts)
}

func clientset(kubeconfig string) (kubernetes.Interface, error) {
	cfg, err := load.LoadConfig(kubeconfig)
	if err != nil {
		return nil, err
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("clientset: %w", err)
	}
	return cs, nil
}
