package server

import (
	"context"

	"go.uber.org/zap"

	"github.com/orch/orch/internal/pki"
)

// keepCertsRenewed re-checks the server's leaf certificates every 12 hours
// and renews those within 90 days of expiry without a restart: the TLS
// listeners and the Raft transport read the current certificate at each
// handshake; a renewed admin certificate is written into the admin
// kubeconfig again.
func keepCertsRenewed(ctx context.Context, cfg Config, p *Parsed, bundle *pki.Bundle, log *zap.Logger) {
	bundle.KeepRenewed(ctx, cfg.CertRenewCheck, func(names []string) {
		log.Info("renewed certificates without a restart", zap.Strings("certificates", names))
		if err := writeKubeconfig(cfg, p, bundle); err != nil {
			log.Error("writing the admin kubeconfig with the renewed certificate", zap.Error(err))
		}
	})
}
