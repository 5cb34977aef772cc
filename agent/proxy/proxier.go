package proxy

import (
	"context"
	"fmt"
	"os"
	"time"

	"go.uber.org/zap"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	discoverylisters "k8s.io/client-go/listers/discovery/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/orch/orch/agent/network"
	"github.com/orch/orch/internal/cachetrim"
)

// Proxier programs the node's iptables from Services and EndpointSlices.
type Proxier struct {
	cfg      Config
	log      *zap.Logger
	factory  informers.SharedInformerFactory
	services corelisters.ServiceLister
	slices   discoverylisters.EndpointSliceLister
	syncer   *syncer
	kick     chan struct{}
}

// New sets the proxy up (informers, iptables backend); Run starts it.
func New(log *zap.Logger, client kubernetes.Interface, cfg Config) (*Proxier, error) {
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	log = log.Named("proxy")
	be, err := newBackend(log, cfg)
	if err != nil {
		return nil, err
	}
	return newProxier(log, client, cfg, be, netlinkConntrack{})
}

// newProxier builds a proxier on a backend (cfg has its defaults).
func newProxier(log *zap.Logger, client kubernetes.Interface, cfg Config, be backend, ct conntracker) (*Proxier, error) {
	f := cfg.Informers
	if f == nil {
		f = informers.NewSharedInformerFactoryWithOptions(client, 0, cachetrim.Option())
	}
	p := &Proxier{cfg: cfg, log: log, factory: f, kick: make(chan struct{}, 1),
		syncer: newSyncer(log, be, newGenerator(cfg, be.HasRandomFully()), ct)}
	p.services = f.Core().V1().Services().Lister()
	p.slices = f.Discovery().V1().EndpointSlices().Lister()
	h := cache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { p.poke() },
		UpdateFunc: func(any, any) { p.poke() },
		DeleteFunc: func(any) { p.poke() },
	}
	if _, err := f.Core().V1().Services().Informer().AddEventHandler(h); err != nil {
		return nil, fmt.Errorf("service informer: %w", err)
	}
	if _, err := f.Discovery().V1().EndpointSlices().Informer().AddEventHandler(h); err != nil {
		return nil, fmt.Errorf("endpointslice informer: %w", err)
	}
	return p, nil
}

func newBackend(log *zap.Logger, cfg Config) (*host, error) {
	cmd := cfg.IPTables
	if cmd == "" {
		cmd = network.DetectIPTables(log)
	}
	return newHost(cmd)
}

// poke asks for a sync (coalesced).
func (p *Proxier) poke() {
	select {
	case p.kick <- struct{}{}:
	default:
	}
}

// Run syncs until ctx ends. The rules stay in place when it returns, so
// Services keep working while the agent restarts (as with kube-proxy).
func (p *Proxier) Run(ctx context.Context) error {
	p.factory.StartWithContext(ctx)
	defer p.factory.Shutdown()
	for typ, ok := range p.factory.WaitForCacheSync(ctx.Done()) {
		if !ok {
			return fmt.Errorf("proxy: %v cache did not sync: %w", typ, ctx.Err())
		}
	}
	if p.cfg.BridgeName != "" {
		p.routeLocalnet()
	}
	p.loop(ctx)
	return nil
}

// routeLocalnet lets localhost NodePorts reach pods on the bridge, as
// kube-proxy's net.ipv4.conf.all.route_localnet (only for the bridge here).
func (p *Proxier) routeLocalnet() {
	path := "/proc/sys/net/ipv4/conf/" + p.cfg.BridgeName + "/route_localnet"
	if err := os.WriteFile(path, []byte("1"), 0o644); err != nil {
		p.log.Warn("localhost NodePorts will not reach pods", zap.String("sysctl", path), zap.Error(err))
	}
}

// loop syncs on changes, at most once per MinSyncPeriod, fully every
// SyncPeriod, retrying failures after MinSyncPeriod.
func (p *Proxier) loop(ctx context.Context) {
	full := time.NewTicker(p.cfg.SyncPeriod)
	defer full.Stop()
	var last time.Time
	doFull := true
	p.poke()
	for {
		select {
		case <-ctx.Done():
			return
		case <-full.C:
			doFull = true
		case <-p.kick:
		}
		if wait := p.cfg.MinSyncPeriod - time.Since(last); wait > 0 {
			select {
			case <-ctx.Done():
				return
			case <-time.After(wait):
			}
		}
		select { // changes that came while waiting are in this sync
		case <-p.kick:
		default:
		}
		last = time.Now()
		if err := p.syncOnce(doFull); err != nil {
			p.log.Error("syncing service rules failed; retrying", zap.Error(err))
			time.AfterFunc(p.cfg.MinSyncPeriod, p.poke)
			doFull = true
			continue
		}
		doFull = false
	}
}

func (p *Proxier) syncOnce(full bool) error {
	ports, err := p.servicePorts()
	if err != nil {
		return err
	}
	st, err := p.syncer.sync(ports, full)
	if err != nil {
		return err
	}
	log := p.log.Debug
	if st.Full {
		log = p.log.Info
	}
	log("synced service rules", zap.Bool("full", st.Full), zap.Int("servicePorts", len(ports)),
		zap.Int("rules", st.Rules), zap.Int("chainsWritten", st.Written), zap.Int("chainsDeleted", st.Deleted),
		zap.Strings("cacheHint", st.Hinted), zap.Duration("took", st.Took))
	return nil
}

// servicePorts reads every proxied service port from the caches.
func (p *Proxier) servicePorts() ([]*servicePort, error) {
	svcs, err := p.services.List(labels.Everything())
	if err != nil {
		return nil, fmt.Errorf("listing services: %w", err)
	}
	all, err := p.slices.List(labels.Everything())
	if err != nil {
		return nil, fmt.Errorf("listing endpointslices: %w", err)
	}
	bySvc := map[string][]*discoveryv1.EndpointSlice{}
	for _, s := range all {
		if name := s.Labels[discoveryv1.LabelServiceName]; name != "" {
			k := s.Namespace + "/" + name
			bySvc[k] = append(bySvc[k], s)
		}
	}
	var ports []*servicePort
	for _, svc := range svcs {
		ports = append(ports, servicePorts(svc, bySvc[svc.Namespace+"/"+svc.Name], p.cfg.NodeName)...)
	}
	return ports, nil
}

// Cleanup removes every chain the proxy owns under cfg.Prefix and its jumps
// (uninstall, tests). It is idempotent.
func Cleanup(log *zap.Logger, cfg Config) error {
	cfg = cfg.withDefaults()
	be, err := newBackend(log, cfg)
	if err != nil {
		return err
	}
	return cleanup(be, newChainNames(cfg.Prefix))
}
