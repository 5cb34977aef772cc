package ingress

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"strconv"
	"sync/atomic"
	"time"

	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	discoverylisters "k8s.io/client-go/listers/discovery/v1"
	networkinglisters "k8s.io/client-go/listers/networking/v1"
	"k8s.io/client-go/tools/cache"
)

// Config is what the ingress controller needs.
type Config struct {
	Client kubernetes.Interface
	Logger *zap.Logger
	// BindAddress is the address both ports listen on ("" = all).
	BindAddress string
	// HTTPPort and HTTPSPort (80 and 443); 0 disables one.
	HTTPPort, HTTPSPort int
	// RetryBind is how often a port that was taken is tried again (10s).
	RetryBind time.Duration
	// Informers, when set, is the agent's shared factory the Services,
	// EndpointSlices, Ingresses and IngressClasses come from (else the
	// controller watches them itself, trimmed to what the Table reads).
	Informers informers.SharedInformerFactory
}

// Controller keeps the routing Table current and the listeners open while
// the IngressClass "orch" exists.
type Controller struct {
	cfg       Config
	log       *zap.Logger
	factory   informers.SharedInformerFactory
	ingresses networkinglisters.IngressLister
	classes   networkinglisters.IngressClassLister
	services  corelisters.ServiceLister
	slices    discoverylisters.EndpointSliceLister
	synced    []cache.InformerSynced
	secrets   *secrets
	table     atomic.Pointer[Table]
	trigger   chan struct{}
	ln        *listeners
	bindErr   string
}

// New registers the informers; Run serves.
func New(cfg Config) (*Controller, error) {
	if cfg.Client == nil || cfg.Logger == nil {
		return nil, errors.New("ingress: Client and Logger are required")
	}
	if cfg.HTTPPort < 0 || cfg.HTTPPort > 65535 || cfg.HTTPSPort < 0 || cfg.HTTPSPort > 65535 {
		return nil, errors.New("ingress: ports must be 0 (off) to 65535")
	}
	if cfg.RetryBind == 0 {
		cfg.RetryBind = 10 * time.Second
	}
	def, err := defaultCertificate()
	if err != nil {
		return nil, err
	}
	f, own := cfg.Informers, cfg.Informers == nil
	if own {
		f = informers.NewSharedInformerFactory(cfg.Client, 0)
	}
	c := &Controller{cfg: cfg, log: cfg.Logger, factory: f, trigger: make(chan struct{}, 1)}
	c.table.Store(Build(Inputs{}))
	c.secrets = newSecrets(cfg.Client, cfg.Logger, c.changed)
	ing, cls := f.Networking().V1().Ingresses(), f.Networking().V1().IngressClasses()
	svc, sl := f.Core().V1().Services(), f.Discovery().V1().EndpointSlices()
	c.ingresses, c.classes, c.services, c.slices = ing.Lister(), cls.Lister(), svc.Lister(), sl.Lister()
	for _, inf := range []cache.SharedIndexInformer{ing.Informer(), cls.Informer(), svc.Informer(), sl.Informer()} {
		if own { // a shared factory's informers are trimmed by its owner
			if err := inf.SetTransform(slim); err != nil {
				return nil, err
			}
		}
		if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: func(any) { c.changed() },
			UpdateFunc: func(any, any) { c.changed() }, DeleteFunc: func(any) { c.changed() }}); err != nil {
			return nil, err
		}
		c.synced = append(c.synced, inf.HasSynced)
	}
	c.ln = &listeners{httpAddr: addr(cfg.BindAddress, cfg.HTTPPort), httpsAddr: addr(cfg.BindAddress, cfg.HTTPSPort),
		handler: newHandler(c.table.Load, cfg.Logger), log: cfg.Logger,
		tlsConfig: &tls.Config{MinVersion: tls.VersionTLS12, GetCertificate: func(hello *tls.ClientHelloInfo) (*tls.Certificate, error) {
			if cert := c.table.Load().Certificate(hello.ServerName); cert != nil {
				return cert, nil
			}
			return def, nil
		}}}
	return c, nil
}

func addr(host string, port int) string {
	if port == 0 {
		return ""
	}
	return net.JoinHostPort(host, strconv.Itoa(port))
}

// slim drops what the Table never reads, to keep the caches small.
func slim(obj any) (any, error) {
	if m, err := meta.Accessor(obj); err == nil {
		m.SetManagedFields(nil)
		if a := m.GetAnnotations(); a != nil {
			delete(a, corev1.LastAppliedConfigAnnotation)
		}
	}
	return obj, nil
}

func (c *Controller) changed() {
	select {
	case c.trigger <- struct{}{}:
	default:
	}
}

// Run syncs the caches and keeps the Table and listeners current until
// ctx ends; then it closes the listeners.
func (c *Controller) Run(ctx context.Context) error {
	defer c.secrets.stop()
	defer c.ln.close()
	c.factory.StartWithContext(ctx)
	defer c.factory.Shutdown()
	if !cache.WaitForCacheSync(ctx.Done(), c.synced...) {
		return ctx.Err()
	}
	c.log.Info("ingress controller running", zap.String("class", ClassName))
	retry := time.NewTicker(c.cfg.RetryBind)
	defer retry.Stop()
	c.sync(ctx)
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-c.trigger:
		case <-retry.C:
			if c.ln.isOpen() || c.bindErr == "" {
				continue
			}
		}
		c.sync(ctx)
	}
}

// sync rebuilds the Table and opens or closes the listeners.
func (c *Controller) sync(ctx context.Context) {
	enabled, defClass := c.class()
	ings, _ := c.ingresses.List(labels.Everything())
	svcs, _ := c.services.List(labels.Everything())
	slices, _ := c.slices.List(labels.Everything())
	keys := map[string]bool{}
	for _, ing := range ings {
		if enabled && Served(ing, defClass) {
			for _, t := range ing.Spec.TLS {
				if t.SecretName != "" {
					keys[ing.Namespace+"/"+t.SecretName] = true
				}
			}
		}
	}
	c.secrets.want(ctx, keys)
	c.table.Store(Build(Inputs{Ingresses: ings, Services: svcs, Slices: slices, Certs: c.secrets.certs(), DefaultClass: defClass}))
	switch {
	case enabled && !c.ln.isOpen():
		if err := c.ln.open(); err != nil {
			if err.Error() != c.bindErr {
				c.log.Error("ingress not serving; retrying", zap.Error(err))
			}
			c.bindErr = err.Error()
			return
		}
		c.bindErr = ""
	case !enabled && c.ln.isOpen():
		c.log.Info("IngressClass " + ClassName + " is gone: the ingress ports are freed")
		c.ln.close()
	}
}

// class reports whether the IngressClass orch exists for this controller
// and whether it is the default class.
func (c *Controller) class() (enabled, isDefault bool) {
	ic, err := c.classes.Get(ClassName)
	if err != nil || ic.Spec.Controller != ControllerName || ic.DeletionTimestamp != nil {
		return false, false
	}
	return true, ic.Annotations[DefaultClassAnnotation] == "true"
}
