package nodeipam

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"time"

	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"

	"github.com/orch/orch/internal/cachetrim"
)

// Defaults of Config.
const (
	DefaultClusterCIDR = "10.42.0.0/16"
	DefaultMaskIPv4    = 24
	DefaultMaskIPv6    = 64
	// EventCIDRNotAvailable is the reason of the Warning event recorded on a
	// Node when no subnet is left for it.
	EventCIDRNotAvailable = "CIDRNotAvailable"
	controllerName        = "nodeipam"
)

// Config configures a Controller.
type Config struct {
	// Client talks to the API (for orch server: built from the API
	// server's LoopbackTransport, see NewForConfig).
	Client kubernetes.Interface
	// ClusterCIDR to split; "" = DefaultClusterCIDR.
	ClusterCIDR string
	// NodeMaskSize is the prefix length of each Node's subnet; 0 = /24 for
	// IPv4, /64 for IPv6.
	NodeMaskSize int
	// Informers returns the informer factory of one Run (a leadership
	// term; the server's: a view of its shared cache, whose Shutdown takes
	// back the term's handlers); nil = a new factory over Client per Run.
	Informers func() informers.SharedInformerFactory
	// Logger is named "nodeipam"; nil = no logging.
	Logger *zap.Logger
	// RateLimiter of the workqueue; nil = exponential 50ms..30s per item.
	RateLimiter workqueue.TypedRateLimiter[string]
}

// Controller assigns pod CIDRs to Nodes. Create it with New; Run it only
// on the Raft leader.
type Controller struct {
	client  kubernetes.Interface
	cluster netip.Prefix
	mask    int
	log     *zap.Logger
	limiter func() workqueue.TypedRateLimiter[string]
	factory func() informers.SharedInformerFactory
}

// NewForConfig builds a clientset from rc (e.g. rest.Config{Host:
// "http://orch-loopback", Transport: api.LoopbackTransport()}) and a
// Controller with it.
func NewForConfig(rc *rest.Config, cfg Config) (*Controller, error) {
	client, err := kubernetes.NewForConfig(rc)
	if err != nil {
		return nil, fmt.Errorf("nodeipam: client: %w", err)
	}
	cfg.Client = client
	return New(cfg)
}

// New checks cfg and builds a Controller.
func New(cfg Config) (*Controller, error) {
	if cfg.Client == nil {
		return nil, errors.New("nodeipam: Config.Client is required")
	}
	if cfg.ClusterCIDR == "" {
		cfg.ClusterCIDR = DefaultClusterCIDR
	}
	cluster, err := netip.ParsePrefix(cfg.ClusterCIDR)
	if err != nil {
		return nil, fmt.Errorf("nodeipam: cluster CIDR: %w", err)
	}
	if cfg.NodeMaskSize == 0 {
		cfg.NodeMaskSize = DefaultMaskIPv4
		if cluster.Addr().Is6() {
			cfg.NodeMaskSize = DefaultMaskIPv6
		}
	}
	if _, err := NewCIDRSet(cluster, cfg.NodeMaskSize); err != nil {
		return nil, fmt.Errorf("nodeipam: %w", err)
	}
	if cfg.Logger == nil {
		cfg.Logger = zap.NewNop()
	}
	limiter := func() workqueue.TypedRateLimiter[string] {
		if cfg.RateLimiter != nil {
			return cfg.RateLimiter
		}
		return workqueue.NewTypedItemExponentialFailureRateLimiter[string](50*time.Millisecond, 30*time.Second)
	}
	factory := cfg.Informers
	if factory == nil {
		factory = func() informers.SharedInformerFactory {
			return informers.NewSharedInformerFactoryWithOptions(cfg.Client, 0, cachetrim.Option())
		}
	}
	return &Controller{client: cfg.Client, cluster: cluster.Masked(), mask: cfg.NodeMaskSize,
		log: cfg.Logger.Named(controllerName), limiter: limiter, factory: factory}, nil
}

// Run watches Nodes and assigns pod CIDRs until ctx ends. Every call starts
// from scratch: fresh event handlers and a bitmap rebuilt from existing Nodes.
func (c *Controller) Run(ctx context.Context) error {
	factory := c.factory()
	nodes := factory.Core().V1().Nodes()
	informer := nodes.Informer()
	broadcaster := record.NewBroadcaster(record.WithContext(ctx))
	defer broadcaster.Shutdown()
	broadcaster.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: c.client.CoreV1().Events("")})
	set, _ := NewCIDRSet(c.cluster, c.mask)
	r := &run{
		c:        c,
		lister:   nodes.Lister(),
		set:      set,
		owner:    map[string]netip.Prefix{},
		queue:    workqueue.NewTypedRateLimitingQueueWithConfig(c.limiter(), workqueue.TypedRateLimitingQueueConfig[string]{Name: controllerName}),
		recorder: broadcaster.NewRecorder(scheme.Scheme, corev1.EventSource{Component: "orch-" + controllerName}),
	}
	defer r.queue.ShutDown()
	if _, err := informer.AddEventHandler(r.handlers()); err != nil {
		return fmt.Errorf("nodeipam: %w", err)
	}
	factory.StartWithContext(ctx)
	defer factory.Shutdown()
	if !cache.WaitForCacheSync(ctx.Done(), informer.HasSynced) {
		return ctx.Err()
	}
	if err := r.rebuild(); err != nil {
		return err
	}
	c.log.Info("node IPAM running", zap.Stringer("clusterCIDR", c.cluster), zap.Int("nodeMask", c.mask), zap.Int("free", r.set.Free()))
	go func() {
		<-ctx.Done()
		r.queue.ShutDown()
	}()
	for r.processNext(ctx) {
	}
	return ctx.Err()
}
