package agent

import (
	"context"

	"go.uber.org/zap"
	"k8s.io/client-go/kubernetes"

	"github.com/orch/orch/agent/netpol"
)

// startNetpol enforces NetworkPolicy for this node's pods (iptables under
// cfg.ChainPrefix) until ctx ends or the returned func is called. One that
// cannot start is logged, not fatal: pods still run, unfiltered.
func startNetpol(ctx context.Context, cfg Config, log *zap.Logger, client kubernetes.Interface) func() {
	c, err := netpol.New(netpol.Config{NodeName: cfg.NodeName, Prefix: cfg.ChainPrefix, Client: client, Log: log})
	if err != nil {
		log.Error("network policy enforcement not started", zap.Error(err))
		return func() {}
	}
	return runInBackground(ctx, log, "network policy enforcement", c.Run)
}
