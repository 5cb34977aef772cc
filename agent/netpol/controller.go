package netpol

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/informers"
	corelisters "k8s.io/client-go/listers/core/v1"
	networkinglisters "k8s.io/client-go/listers/networking/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/orch/orch/agent/network"
)

// Controller enforces the NetworkPolicies of the pods on one node.
type Controller struct {
	cfg      Config
	log      *zap.Logger
	factory  informers.SharedInformerFactory // NetworkPolicies
	policies networkinglisters.NetworkPolicyLister
	// members are the cluster's Pods and Namespaces, watched only while a
	// NetworkPolicy exists: without one no pod is isolated, and a cluster
	// that uses none spares every node a watch and a cache of all pods.
	members *members // nil while not watched
	syncer  *syncer
	kick    chan struct{}
}

// membersSyncTimeout bounds the wait for the first list of the pods and
// namespaces; the sync is retried after it.
const membersSyncTimeout = 30 * time.Second

// members are the Pod and Namespace watches of a Controller.
type members struct {
	factory informers.SharedInformerFactory
	cancel  context.CancelFunc
	pods    corelisters.PodLister
	nss     corelisters.NamespaceLister
}

func (m *members) stop() {
	m.cancel()
	m.factory.Shutdown()
}

// New sets the enforcer up (informers, iptables backend); Run starts it.
func New(cfg Config) (*Controller, error) {
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	log := cfg.Log.Named("netpol")
	if cfg.IPTables == "" {
		cfg.IPTables = network.DetectIPTables(log)
	}
	be, err := newHost(cfg.IPTables)
	if err != nil {
		return nil, err
	}
	return newController(cfg, log, be)
}

func newController(cfg Config, log *zap.Logger, be backend) (*Controller, error) {
	f := informers.NewSharedInformerFactory(cfg.Client, 0)
	c := &Controller{cfg: cfg, log: log, factory: f, kick: make(chan struct{}, 1),
		syncer: &syncer{log: log, be: be, n: newChainNames(cfg.Prefix)}}
	c.policies = f.Networking().V1().NetworkPolicies().Lister()
	if _, err := f.Networking().V1().NetworkPolicies().Informer().AddEventHandler(c.pokeOnChange()); err != nil {
		return nil, fmt.Errorf("networkpolicy informer: %w", err)
	}
	return c, nil
}

func (c *Controller) pokeOnChange() cache.ResourceEventHandler {
	return cache.ResourceEventHandlerFuncs{AddFunc: func(any) { c.poke() },
		UpdateFunc: func(any, any) { c.poke() }, DeleteFunc: func(any) { c.poke() }}
}

// startMembers starts the Pod and Namespace watches (trimmed to what the
// compiler reads) and waits until they have synced.
func (c *Controller) startMembers(ctx context.Context) (*members, error) {
	f := informers.NewSharedInformerFactory(c.cfg.Client, 0)
	podInf, nsInf := f.Core().V1().Pods().Informer(), f.Core().V1().Namespaces().Informer()
	if err := podInf.SetTransform(slimPod); err != nil {
		return nil, fmt.Errorf("pod informer: %w", err)
	}
	if err := nsInf.SetTransform(slimNamespace); err != nil {
		return nil, fmt.Errorf("namespace informer: %w", err)
	}
	for name, inf := range map[string]cache.SharedIndexInformer{"pod": podInf, "namespace": nsInf} {
		if _, err := inf.AddEventHandler(c.pokeOnChange()); err != nil {
			return nil, fmt.Errorf("%s informer: %w", name, err)
		}
	}
	ctx, cancel := context.WithCancel(ctx)
	m := &members{factory: f, cancel: cancel, pods: f.Core().V1().Pods().Lister(), nss: f.Core().V1().Namespaces().Lister()}
	f.StartWithContext(ctx)
	// Bounded, so the loop goes on checking the jump while the API is away.
	wait, done := context.WithTimeout(ctx, membersSyncTimeout)
	defer done()
	for typ, ok := range f.WaitForCacheSync(wait.Done()) {
		if !ok {
			m.stop()
			return nil, fmt.Errorf("network policy: %v cache did not sync: %w", typ, wait.Err())
		}
	}
	return m, nil
}

// followPolicies watches the pods and namespaces while a NetworkPolicy
// exists, and stops when none is left.
func (c *Controller) followPolicies(ctx context.Context) error {
	pols, _ := c.policies.List(labels.Everything())
	switch {
	case len(pols) > 0 && c.members == nil:
		m, err := c.startMembers(ctx)
		if err != nil {
			return err
		}
		c.members = m
		c.log.Info("network policies exist: watching pods and namespaces")
	case len(pols) == 0 && c.members != nil:
		c.members.stop()
		c.members = nil
		c.log.Info("no network policy left: not watching pods and namespaces")
	}
	return nil
}

func (c *Controller) poke() {
	select {
	case c.kick <- struct{}{}:
	default:
	}
}

// Run syncs on every change (coalesced to one sync per MinSyncPeriod)
// until ctx ends. The rules stay in place afterwards, unless no pod is
// isolated: then they are removed.
func (c *Controller) Run(ctx context.Context) error {
	c.factory.StartWithContext(ctx)
	defer c.factory.Shutdown()
	for typ, ok := range c.factory.WaitForCacheSync(ctx.Done()) {
		if !ok {
			return fmt.Errorf("network policy: %v cache did not sync: %w", typ, ctx.Err())
		}
	}
	defer func() {
		if c.members != nil {
			c.members.stop()
		}
	}()
	c.log.Info("network policy enforcement running", zap.String("prefix", c.cfg.Prefix))
	start := time.Now()
	check := time.NewTimer(c.jumpPeriod(start))
	defer check.Stop()
	c.poke()
	for {
		select {
		case <-ctx.Done():
			c.stop()
			return nil
		case <-c.kick:
			c.sync(ctx)
			select { // coalesce the changes of the next MinSyncPeriod
			case <-ctx.Done():
			case <-time.After(c.cfg.MinSyncPeriod):
			}
		case <-check.C:
			if err := c.syncer.checkJump(); err != nil {
				c.log.Warn("network policy jump", zap.Error(err))
				c.poke()
			}
			check.Reset(c.jumpPeriod(start))
		}
	}
}

func (c *Controller) jumpPeriod(start time.Time) time.Duration {
	if time.Since(start) < startupWindow {
		return min(startupJumpCheck, c.cfg.JumpCheckPeriod)
	}
	return c.cfg.JumpCheckPeriod
}

// sync compiles the cluster state and applies it; a failure is retried.
func (c *Controller) sync(ctx context.Context) {
	if err := c.followPolicies(ctx); err != nil {
		if ctx.Err() == nil {
			c.log.Error("network policy: watching pods and namespaces failed; retrying", zap.Error(err))
			time.AfterFunc(5*time.Second, c.poke)
		}
		return
	}
	rs := render(c.syncer.n, compile(c.snapshot(), func(msg string, err error) {
		c.log.Warn(msg, zap.Error(err))
	}))
	if err := c.syncer.apply(rs, false); err != nil {
		c.log.Error("network policy sync failed; retrying", zap.Error(err))
		time.AfterFunc(5*time.Second, c.poke)
	}
}

// stop leaves the rules in place while pods are isolated (they stay
// enforced while the agent restarts); otherwise it removes them.
func (c *Controller) stop() {
	if c.syncer.isol {
		return
	}
	if err := cleanup(c.syncer.be, c.syncer.n); err != nil {
		c.log.Warn("removing the unused network policy chains", zap.Error(err))
	}
}

// snapshot reads the caches (objects are only read, never changed).
// Without members there is no policy, and no pod or namespace matters.
func (c *Controller) snapshot() snapshot {
	s := snapshot{Namespaces: map[string]map[string]string{}}
	if c.members == nil {
		return s
	}
	pods, _ := c.members.pods.List(labels.Everything())
	for _, p := range pods {
		if info, ok := podFromAPI(p, c.cfg.NodeName); ok {
			s.Pods = append(s.Pods, info)
		}
	}
	slices.SortFunc(s.Pods, func(a, b podInfo) int { return strings.Compare(a.key(), b.key()) })
	nss, _ := c.members.nss.List(labels.Everything())
	for _, ns := range nss {
		s.Namespaces[ns.Name] = ns.Labels
	}
	s.Policies, _ = c.policies.List(labels.Everything())
	slices.SortFunc(s.Policies, func(a, b *networkingv1.NetworkPolicy) int {
		return strings.Compare(a.Namespace+"/"+a.Name, b.Namespace+"/"+b.Name)
	})
	return s
}

// Cleanup removes the jump and every network policy chain under prefix
// (uninstall, tests); iptablesCmd empty detects the backend.
func Cleanup(log *zap.Logger, prefix, iptablesCmd string) error {
	if prefix == "" {
		prefix = defaultPrefix
	}
	if iptablesCmd == "" {
		iptablesCmd = network.DetectIPTables(log)
	}
	be, err := newHost(iptablesCmd)
	if err != nil {
		return err
	}
	return cleanup(be, newChainNames(prefix))
}

// slimPod keeps only what the compiler reads, to keep the cache small.
func slimPod(obj any) (any, error) {
	p, ok := obj.(*corev1.Pod)
	if !ok {
		return obj, nil
	}
	out := &corev1.Pod{}
	out.Name, out.Namespace, out.UID, out.ResourceVersion, out.Labels = p.Name, p.Namespace, p.UID, p.ResourceVersion, p.Labels
	out.Spec.NodeName, out.Spec.HostNetwork = p.Spec.NodeName, p.Spec.HostNetwork
	for _, ct := range p.Spec.Containers {
		if len(ct.Ports) > 0 {
			out.Spec.Containers = append(out.Spec.Containers, corev1.Container{Name: ct.Name, Ports: ct.Ports})
		}
	}
	out.Status.Phase, out.Status.PodIP, out.Status.PodIPs = p.Status.Phase, p.Status.PodIP, p.Status.PodIPs
	return out, nil
}

func slimNamespace(obj any) (any, error) {
	ns, ok := obj.(*corev1.Namespace)
	if !ok {
		return obj, nil
	}
	out := &corev1.Namespace{}
	out.Name, out.UID, out.ResourceVersion, out.Labels = ns.Name, ns.UID, ns.ResourceVersion, ns.Labels
	return out, nil
}
