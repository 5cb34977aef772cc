package server

import (
	"context"
	"path/filepath"

	"go.uber.org/zap"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/orch/orch/server/deploy"
)

// ManifestsDir is where auto-deploy manifests are read from.
func ManifestsDir(dataDir string) string { return filepath.Join(dataDir, "server", "manifests") }

// manifestsLoop is the leader-only auto-deploy controller of
// <data-dir>/server/manifests (server/deploy), applying as the loopback
// identity. Each leadership starts from a fresh controller.
func manifestsLoop(cfg Config, loopback *rest.Config, client kubernetes.Interface, log *zap.Logger) (controller, error) {
	applier, err := deploy.NewClusterApplier(loopback)
	if err != nil {
		return controller{}, err
	}
	disabled := map[string]bool{}
	for _, name := range cfg.Disable {
		disabled[name] = true
	}
	dir := deploy.Dir{Path: ManifestsDir(cfg.DataDir), Disabled: disabled, Server: nodeName(cfg)}
	log = log.Named("deploy")
	return controller{"manifests", func(ctx context.Context) error {
		return deploy.New(dir, applier, deploy.NewConfigMapRecords(client), deploy.NewEventWarner(client, log), log).Run(ctx)
	}}, nil
}
