package agent

import (
	"context"

	"go.uber.org/zap"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"

	"github.com/orch/orch/agent/ingress"
)

// startIngress runs the built-in Ingress controller (package agent/ingress)
// until ctx ends or the returned func is called. It listens only while the
// IngressClass "orch" exists; both ports 0 turn it off. One that cannot
// start is logged, not fatal: pods still run.
func startIngress(ctx context.Context, cfg Config, log *zap.Logger, client kubernetes.Interface,
	shared informers.SharedInformerFactory) func() {
	if cfg.IngressHTTPPort == 0 && cfg.IngressHTTPSPort == 0 {
		log.Info("built-in ingress off (--ingress-http-port and --ingress-https-port are 0)")
		return func() {}
	}
	c, err := ingress.New(ingress.Config{Client: client, Informers: shared, Logger: log.Named("ingress"),
		HTTPPort: cfg.IngressHTTPPort, HTTPSPort: cfg.IngressHTTPSPort})
	if err != nil {
		log.Error("ingress not started", zap.Error(err))
		return func() {}
	}
	return runInBackground(ctx, log, "ingress", c.Run)
}
