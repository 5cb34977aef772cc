package agent

import (
	"context"

	"go.uber.org/zap"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"

	"github.com/orch/orch/agent/dns"
)

// startDNS serves the cluster DNS IP on this node (package agent/dns) until
// ctx ends or the returned func is called, which also removes its
// interface. A DNS server that cannot start is logged, not fatal: pods
// still run.
func startDNS(ctx context.Context, cfg Config, log *zap.Logger, client kubernetes.Interface,
	shared informers.SharedInformerFactory) func() {
	srv, err := dns.New(dns.Config{Client: client, Informers: shared, ClusterDNS: cfg.ClusterDNS, ClusterDomain: cfg.ClusterDomain,
		LinkName: dns.LinkName(cfg.BridgeName), Logger: log.Named("dns")})
	if err != nil {
		log.Error("cluster DNS not started", zap.Error(err))
		return func() {}
	}
	return runInBackground(ctx, log, "cluster DNS", srv.Run)
}
