package server

import (
	"context"
	"crypto/tls"
	"fmt"
	"slices"

	"go.uber.org/zap"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"

	"github.com/orch/orch/server/apiserver"
	"github.com/orch/orch/server/metricsapi"
)

// DisableMetricsServer is the --disable name that turns the built-in
// metrics.k8s.io off (as k3s's packaged metrics-server is disabled).
const DisableMetricsServer = "metrics-server"

// metricsAPI is orch's built-in metrics.k8s.io (server/metricsapi): every
// server scrapes the nodes itself, so whichever server answers has the
// data without asking the leader. nil when disabled.
type metricsAPI struct {
	store   *metricsapi.Store
	objects *metricsapi.LateObjects
	// kubeletTLS is the API server's kubelet client TLS (set by newAPIServer).
	kubeletTLS *tls.Config
}

func newMetricsAPI(cfg Config) *metricsAPI {
	if slices.Contains(cfg.Disable, DisableMetricsServer) {
		return nil
	}
	return &metricsAPI{store: metricsapi.NewStore(metricsapi.DefaultResolution), objects: &metricsapi.LateObjects{}}
}

// resources are the virtual resources the API server serves.
func (m *metricsAPI) resources() []apiserver.Virtual {
	if m == nil {
		return nil
	}
	return metricsapi.Resources(m.store, m.objects)
}

// setKubeletTLS records the API server's kubelet client TLS.
func (m *metricsAPI) setKubeletTLS(tc *tls.Config) {
	if m != nil {
		m.kubeletTLS = tc
	}
}

// start binds the resources to api's loopback and starts the scraper (on
// every server); the returned func stops it.
// The Nodes come from f, a view of the server's shared cache.
func (m *metricsAPI) start(ctx context.Context, api *apiserver.Server, f informers.SharedInformerFactory, log *zap.Logger) (func(), error) {
	if m == nil || m.kubeletTLS == nil {
		return func() {}, nil
	}
	meta, err := metadata.NewForConfig(&rest.Config{Host: "http://orch-loopback", Transport: api.LoopbackTransport(), QPS: -1})
	if err != nil {
		return nil, fmt.Errorf("metrics API loopback client: %w", err)
	}
	m.objects.Set(metricsapi.MetadataObjects{Client: meta})
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	nodes := f.Core().V1().Nodes()
	s := &metricsapi.Scraper{Nodes: metricsapi.ListerNodes{Lister: nodes.Lister(), Synced: nodes.Informer().HasSynced},
		Fetch: metricsapi.NewKubeletFetcher(m.kubeletTLS), Store: m.store, Log: log.Named("metrics-api")}
	f.StartWithContext(ctx)
	go func() { defer close(done); s.Run(ctx) }()
	return func() { cancel(); <-done; f.Shutdown() }, nil
}

// leaderLoops create the metrics reader ClusterRole (leader only).
func (m *metricsAPI) leaderLoops(client kubernetes.Interface, log *zap.Logger) []controller {
	if m == nil {
		return nil
	}
	return []controller{{"metrics reader role", func(ctx context.Context) error {
		if retry(ctx, func(ctx context.Context) error { return metricsapi.EnsureReaderRole(ctx, client) }, log) {
			<-ctx.Done()
		}
		return nil
	}}}
}
