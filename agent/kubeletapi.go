package agent

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"strconv"
	"sync"
	"time"

	"go.uber.org/zap"
	"k8s.io/client-go/kubernetes"

	"github.com/orch/orch/agent/join"
	"github.com/orch/orch/agent/kubelet"
	"github.com/orch/orch/agent/kubeletapi"
	"github.com/orch/orch/agent/runtime"
)

// APIServerKubeletClientCN is the common name of the API server's client
// certificate, the only client the kubelet API serves.
const APIServerKubeletClientCN = "system:apiserver-kubelet-client"

// serveKubeletAPI serves logs, exec and port-forward on the kubelet port
// with the node's serving certificate. Without one (a server that does not
// issue them) the API is left off and logged; the pods still run. stop ends
// the listener.
func serveKubeletAPI(ctx context.Context, cfg Config, log *zap.Logger, creds *join.Credentials, rt runtime.Interface,
	k *kubelet.Kubelet, x kubeletAPIExtras) (stop func()) {
	srv, err := newKubeletAPI(cfg, log, creds, rt, k, x)
	if err != nil {
		log.Warn("kubelet API disabled: kubectl logs/exec/port-forward will not reach this node", zap.Error(err))
		return func() {}
	}
	ln, err := net.Listen("tcp", net.JoinHostPort("", strconv.Itoa(cfg.KubeletPort)))
	if err != nil {
		log.Warn("kubelet API disabled: cannot listen", zap.Int("port", cfg.KubeletPort), zap.Error(err))
		return func() {}
	}
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		if err := srv.Serve(ctx, ln); err != nil && ctx.Err() == nil {
			log.Warn("kubelet API stopped", zap.Error(err))
		}
	}()
	log.Info("kubelet API listening", zap.String("address", ln.Addr().String()))
	return func() { cancel(); _ = ln.Close(); wg.Wait() }
}

// kubeletAPIExtras are what the metrics endpoints and delegated
// authentication/authorization need: the agent's API client and cgroups.
type kubeletAPIExtras struct {
	client kubernetes.Interface
	cg     cgroupUsage // nil: no metrics endpoints
	prom   agentMetrics
}

func newKubeletAPI(cfg Config, log *zap.Logger, creds *join.Credentials, rt runtime.Interface, k *kubelet.Kubelet,
	x kubeletAPIExtras) (*kubeletapi.Server, error) {
	if _, err := creds.ServingTLS(); err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(creds.CAPEM) {
		return nil, fmt.Errorf("the cluster CA in the node credentials is not PEM")
	}
	return kubeletapi.New(log, kubeletapi.Config{
		Runtime: rt, LogDir: runtime.DefaultLogDir(cfg.DataDir),
		ServerTLS: &tls.Config{GetCertificate: join.ServingCertificateFrom(creds.ServingCertPath, creds.ServingKeyPath), MinVersion: tls.VersionTLS12},
		ClientCA:  pool,
		AllowedClient: func(c *x509.Certificate) bool {
			return c.Subject.CommonName == APIServerKubeletClientCN
		},
		PodLookup:  kubeletapi.PodLookupFromRuntime(rt, k.GetPod),
		Tokens:     apiReviews{client: x.client, node: cfg.NodeName},
		Access:     apiReviews{client: x.client, node: cfg.NodeName},
		Stats:      statsOf(cfg, x, rt, k),
		Pods:       k.Pods,
		NodeLogDir: "/var/log",
		Metrics:    x.prom.kubelet(cfg, k), CadvisorMetrics: x.prom.cadvisor(statsOf(cfg, x, rt, k)), ProbeMetrics: x.prom.probeGatherer(),
	})
}

// statsOf is the metrics source of the kubelet API, nil without cgroups.
func statsOf(cfg Config, x kubeletAPIExtras, rt runtime.Interface, k *kubelet.Kubelet) kubeletapi.Stats {
	if x.cg == nil {
		return nil
	}
	return &nodeStats{node: cfg.NodeName, cg: x.cg, rt: rt, pods: k.Pods, start: time.Now()}
}
