package server

import (
	"context"
	"sync"

	"go.uber.org/zap"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"

	"github.com/orch/orch/server/controllers/apfstatus"
	"github.com/orch/orch/server/controllers/clusterroleaggregation"
	"github.com/orch/orch/server/controllers/cronjob"
	"github.com/orch/orch/server/controllers/csrcleaner"
	"github.com/orch/orch/server/controllers/csrsigning"
	"github.com/orch/orch/server/controllers/daemonset"
	"github.com/orch/orch/server/controllers/deployment"
	"github.com/orch/orch/server/controllers/disruption"
	"github.com/orch/orch/server/controllers/endpoints"
	"github.com/orch/orch/server/controllers/garbagecollector"
	ingresscontroller "github.com/orch/orch/server/controllers/ingress"
	"github.com/orch/orch/server/controllers/job"
	"github.com/orch/orch/server/controllers/kit"
	"github.com/orch/orch/server/controllers/localpath"
	"github.com/orch/orch/server/controllers/nodelifecycle"
	"github.com/orch/orch/server/controllers/podautoscaler"
	"github.com/orch/orch/server/controllers/pvbinder"
	"github.com/orch/orch/server/controllers/replicaset"
	"github.com/orch/orch/server/controllers/replication"
	"github.com/orch/orch/server/controllers/resourcequota"
	"github.com/orch/orch/server/controllers/schedloop"
	"github.com/orch/orch/server/controllers/serviceaccount"
	"github.com/orch/orch/server/controllers/servicecidr"
	"github.com/orch/orch/server/controllers/servicelb"
	"github.com/orch/orch/server/controllers/statefulset"
	"github.com/orch/orch/server/controllers/storageversionmigration"
	"github.com/orch/orch/server/controllers/tokencleaner"
	"github.com/orch/orch/server/controllers/ttlafterfinished"
)

// runner is a controller built on the shared kit.Context.
type runner interface {
	Run(ctx context.Context) error
}

// sharedController builds one controller on the shared cache.
type sharedController struct {
	name  string
	build func(*kit.Context) (runner, error)
}

// apiserverLoop reports the shared controllers kube-apiserver runs itself:
// they run even with --disable-controller-manager.
func apiserverLoop(name string) bool { return name == "apf-status" || name == "ipaddresses" }

// sharedControllers lists the controllers that share one informer cache.
// Add one line per controller.
func sharedControllers() []sharedController {
	return []sharedController{
		{"scheduler", func(kc *kit.Context) (runner, error) { return schedloop.NewShared(kc) }},
		{"replicaset", func(kc *kit.Context) (runner, error) { return replicaset.New(kc) }},
		{"replicationcontroller", func(kc *kit.Context) (runner, error) { return replication.New(kc) }},
		{"deployment", func(kc *kit.Context) (runner, error) { return deployment.New(kc) }},
		{"pvbinder", func(kc *kit.Context) (runner, error) { return pvbinder.New(kc) }},
		{"localpath", func(kc *kit.Context) (runner, error) { return localpath.New(kc) }},
		{"job", func(kc *kit.Context) (runner, error) { return job.New(kc) }},
		{"cronjob", func(kc *kit.Context) (runner, error) { return cronjob.New(kc) }},
		{"ttlafterfinished", func(kc *kit.Context) (runner, error) { return ttlafterfinished.New(kc) }},
		{"garbagecollector", func(kc *kit.Context) (runner, error) { return garbagecollector.New(kc) }},
		{"node lifecycle", func(kc *kit.Context) (runner, error) { return nodelifecycle.New(kc) }},
		{"disruption", func(kc *kit.Context) (runner, error) { return disruption.New(kc) }},
		{"daemonset", func(kc *kit.Context) (runner, error) { return daemonset.New(kc) }},
		{"statefulset", func(kc *kit.Context) (runner, error) { return statefulset.New(kc) }},
		{"resource quota", func(kc *kit.Context) (runner, error) { return resourcequota.New(kc) }},
		{"endpoints", func(kc *kit.Context) (runner, error) { return endpoints.New(kc) }},
		{"endpointslice", func(kc *kit.Context) (runner, error) { return endpoints.NewSlices(kc) }},
		{"servicelb", func(kc *kit.Context) (runner, error) { return servicelb.New(kc) }},
		{"serviceaccount", func(kc *kit.Context) (runner, error) { return serviceaccount.New(kc) }},
		{"root-ca-cert-publisher", func(kc *kit.Context) (runner, error) {
			return serviceaccount.NewRootCA(kc, kc.Options.ClusterCAPEM)
		}},
		{"serviceaccount-token", func(kc *kit.Context) (runner, error) {
			return serviceaccount.NewTokens(kc, kc.Options.IssueLegacyToken, kc.Options.ClusterCAPEM)
		}},
		{"clusterrole-aggregation", func(kc *kit.Context) (runner, error) { return clusterroleaggregation.New(kc) }},
		{"csrsigning", func(kc *kit.Context) (runner, error) { return csrsigning.New(kc, kc.Options.SignCSR) }},
		{"csrcleaner", func(kc *kit.Context) (runner, error) { return csrcleaner.New(kc) }},
		{"apf-status", func(kc *kit.Context) (runner, error) { return apfstatus.New(kc) }},
		{"service-cidr", func(kc *kit.Context) (runner, error) { return servicecidr.New(kc) }},
		{"ipaddresses", func(kc *kit.Context) (runner, error) { return servicecidr.NewIPAddresses(kc) }},
		{"storage-version-migrator", func(kc *kit.Context) (runner, error) { return storageversionmigration.New(kc) }},
		{"tokencleaner", func(kc *kit.Context) (runner, error) { return tokencleaner.New(kc) }},
		{"ingress", func(kc *kit.Context) (runner, error) { return ingresscontroller.New(kc) }},
		{"horizontalpodautoscaling", func(kc *kit.Context) (runner, error) {
			return podautoscaler.New(kc, podautoscaler.Settings{SyncPeriod: kc.Options.HPASyncPeriod})
		}},
		// controllers: one entry each, keep this marker line last
	}
}

// runShared builds every shared controller on one kit.Context, starts the
// cache and runs them until ctx (the leadership) ends.
func runShared(ctx context.Context, client kubernetes.Interface, meta metadata.Interface, list []sharedController, opts kit.Options,
	log *zap.Logger) error {
	kc := kit.New(client, log, opts)
	kc.Metadata = meta
	defer kc.Shutdown()
	type built struct {
		name string
		r    runner
	}
	var all []built
	for _, sc := range list {
		r, err := sc.build(kc)
		if err != nil {
			log.Error("building controller", zap.String("controller", sc.name), zap.Error(err))
			continue
		}
		all = append(all, built{sc.name, r})
	}
	if err := kc.Start(ctx); err != nil {
		return err
	}
	var wg sync.WaitGroup
	for _, b := range all {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := b.r.Run(ctx); err != nil && ctx.Err() == nil {
				log.Error("controller stopped", zap.String("controller", b.name), zap.Error(err))
			}
		}()
	}
	wg.Wait()
	return nil
}

// selectShared drops the scheduler and/or every other controller
// (--disable-scheduler, --disable-controller-manager).
func selectShared(all []sharedController, noScheduler, noControllers bool) []sharedController {
	var out []sharedController
	for _, sc := range all {
		isScheduler := sc.name == "scheduler"
		if (isScheduler && noScheduler) || (!isScheduler && !apiserverLoop(sc.name) && noControllers) {
			continue
		}
		out = append(out, sc)
	}
	return out
}
