package agent

import (
	"context"

	"go.uber.org/zap"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"

	"github.com/orch/orch/agent/proxy"
)

// startProxy runs the Service proxy (iptables under cfg.ChainPrefix) until
// ctx ends or the returned func is called; its rules stay in place, so
// Services keep working while the agent restarts. A proxy that cannot
// start is logged, not fatal: pods still run.
func startProxy(ctx context.Context, cfg Config, log *zap.Logger, client kubernetes.Interface,
	shared informers.SharedInformerFactory) func() {
	p, err := proxy.New(log, client, proxy.Config{NodeName: cfg.NodeName, Informers: shared, Prefix: cfg.ChainPrefix,
		ClusterCIDR: cfg.ClusterCIDR, BridgeName: cfg.BridgeName})
	if err != nil {
		log.Error("service proxy not started", zap.Error(err))
		return func() {}
	}
	return runInBackground(ctx, log, "service proxy", p.Run)
}
