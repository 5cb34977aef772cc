package kit

import (
	"context"
	"crypto/x509"
	"reflect"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"

	"github.com/orch/orch/internal/handlermux"
)

// Context is shared by the controllers of one leadership term.
type Context struct {
	// Client writes through the API (validation, admission).
	Client kubernetes.Interface
	// Informers is the shared cache; controllers register what they need
	// in New, the server starts it once every controller is built. The
	// handlers registered before the start share one listener per
	// informer (internal/handlermux): they must only queue work.
	Informers informers.SharedInformerFactory
	// Logger is the server's; each controller names its own.
	Logger *zap.Logger
	// Options are the server flags controllers read.
	Options Options
	// Metadata, when set, lists and watches any resource as metadata only
	// (custom resources have no typed informer): MetadataInformer's client.
	Metadata metadata.Interface

	mux         *handlermux.Factory                           // Informers, which records what was asked of it
	meta        metaInformers                                 // MetadataInformer's
	filtered    map[filterKey]informers.SharedInformerFactory // FilteredInformers'
	broadcaster record.EventBroadcaster
	beforeStart []func(context.Context)
}

// Options are the knobs of the controllers (server flags).
type Options struct {
	// NodeMonitorGracePeriod: a node whose Lease is older than this gets
	// Ready=Unknown (--node-monitor-grace-period, default 40s).
	NodeMonitorGracePeriod time.Duration
	// DataDir is the server's data dir (local-path volumes live under it on
	// each node: the agent's data dir).
	DataDir string
	// ClusterCAPEM is the cluster CA certificate (published in every
	// namespace as kube-root-ca.crt).
	ClusterCAPEM []byte
	// IssueLegacyToken signs the token of a kubernetes.io/service-account-token
	// Secret (the tokens controller); nil disables that controller.
	IssueLegacyToken func(namespace, saName, saUID, secretName string) (string, error)
	// SignCSR signs an approved CertificateSigningRequest's request with
	// the cluster CA (the CSR signer); nil disables that controller.
	SignCSR func(req *x509.CertificateRequest, ttl time.Duration, keyUsage x509.KeyUsage, extUsage []x509.ExtKeyUsage) ([]byte, error)
	// Loopback is the in-process client's configuration, for clients
	// Client does not cover (the HPA's scale and metrics clients).
	Loopback *rest.Config
	// HPASyncPeriod is --horizontal-pod-autoscaler-sync-period (default 15s).
	HPASyncPeriod time.Duration
	// Metrics, when set, gets the controllers' workqueue_* and scheduler_*
	// metrics (the server's /metrics registry).
	Metrics prometheus.Registerer
	// Cache, when set, is the server's informer factory, which outlives
	// the term: the controllers share its informers with authorization,
	// APF and admission instead of a factory of their own (see New).
	Cache *SharedCache
}

// SharedCache is an informer factory that outlives a leadership term, and
// the func that starts its registered informers for the factory's life.
type SharedCache struct {
	Factory *handlermux.Factory
	Start   func()
}

// New builds a Context over client. Call Start once every controller has
// registered its informers, and Shutdown when the term ends.
//
// With opts.Cache the term's informers are the shared cache's: Start
// starts the ones the term added for the cache's life (a term's context
// would end them for good, and the factory never starts an informer
// twice), and Shutdown removes the term's event handlers, leaving the
// informers to the cache (a later term reuses them).
func New(client kubernetes.Interface, log *zap.Logger, opts Options) *Context {
	if log == nil {
		log = zap.NewNop()
	}
	if opts.Cache != nil {
		view := handlermux.NewView(opts.Cache.Factory, opts.Cache.Start)
		return &Context{Client: client, Informers: view, mux: view.Factory, Logger: log, Options: opts}
	}
	mux := handlermux.NewTrimmed(client, nil)
	return &Context{Client: client, Informers: mux, mux: mux, Logger: log, Options: opts}
}

// Recorder returns an event recorder for component (the event's source).
// All recorders share one broadcaster writing through Client.
func (c *Context) Recorder(component string) record.EventRecorder {
	if c.broadcaster == nil {
		c.broadcaster = record.NewBroadcaster()
		c.broadcaster.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: c.Client.CoreV1().Events("")})
	}
	return c.broadcaster.NewRecorder(scheme.Scheme, corev1.EventSource{Component: component})
}

// BeforeStart registers f to run in Start once every controller is built
// and before any informer runs: the last moment a handler joins its
// informer's shared listener. f must not block for long.
func (c *Context) BeforeStart(f func(context.Context)) { c.beforeStart = append(c.beforeStart, f) }

// Start runs the BeforeStart functions, then starts every registered
// informer. It does not wait for the caches: each controller waits for its
// own in Run (kit.WaitForSync), so a type that cannot be listed holds up
// only the controllers that need it.
func (c *Context) Start(ctx context.Context) error {
	for _, f := range c.beforeStart {
		f(ctx)
	}
	c.Informers.StartWithContext(ctx)
	c.StartMetadata(ctx)
	for _, f := range c.filtered {
		f.StartWithContext(ctx)
	}
	return nil
}

// Caches reports whether the controllers have an informer of resource gvr
// (or of its object type typ, nil when not built in), started or not.
func (c *Context) Caches(gvr schema.GroupVersionResource, typ reflect.Type) bool {
	return c.mux.Has(gvr, typ)
}

// Shutdown stops the informers (or, on a shared cache, removes the term's
// event handlers from them) and the event broadcaster. Call it after the
// ctx given to Start has ended (it waits for the informers to stop).
func (c *Context) Shutdown() {
	c.Informers.Shutdown()
	c.meta.running.Wait()
	for _, f := range c.filtered {
		f.Shutdown()
	}
	if c.broadcaster != nil {
		c.broadcaster.Shutdown()
	}
}

// WaitForSync waits for the caches of informers already started elsewhere.
func WaitForSync(ctx context.Context, synced ...cache.InformerSynced) bool {
	return cache.WaitForCacheSync(ctx.Done(), synced...)
}
