package handlermux

import (
	"context"
	"errors"
	"reflect"
	"sync"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/informers/admissionregistration"
	"k8s.io/client-go/informers/apiserverinternal"
	"k8s.io/client-go/informers/apps"
	"k8s.io/client-go/informers/autoscaling"
	"k8s.io/client-go/informers/batch"
	"k8s.io/client-go/informers/certificates"
	"k8s.io/client-go/informers/coordination"
	"k8s.io/client-go/informers/core"
	"k8s.io/client-go/informers/discovery"
	"k8s.io/client-go/informers/events"
	"k8s.io/client-go/informers/extensions"
	"k8s.io/client-go/informers/flowcontrol"
	"k8s.io/client-go/informers/internalinterfaces"
	"k8s.io/client-go/informers/lifecycle"
	"k8s.io/client-go/informers/networking"
	"k8s.io/client-go/informers/node"
	"k8s.io/client-go/informers/policy"
	"k8s.io/client-go/informers/rbac"
	"k8s.io/client-go/informers/resource"
	"k8s.io/client-go/informers/scheduling"
	"k8s.io/client-go/informers/storage"
	"k8s.io/client-go/informers/storagemigration"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	"github.com/orch/orch/internal/cachetrim"
)

// Factory is a shared informer factory whose informers are muxed. Every
// accessor goes through it: the typed ones (Core().V1().Pods() ...), which
// call back InformerFor, and ForResource.
type Factory struct {
	informers.SharedInformerFactory
	namespace string
	tweak     internalinterfaces.TweakListOptionsFunc

	mu sync.Mutex
	// wrapped is keyed by the informer's indexer: client-go's typed
	// accessors and ForResource hand out a new typed wrapper of the one
	// shared informer at every call, and the indexer is what they share.
	wrapped map[cache.Indexer]*Informer
	// types and resources record what was asked for (Has).
	types     map[reflect.Type]bool
	resources map[schema.GroupVersionResource]bool
}

// NewTrimmed is a muxed factory over client as orch's controllers and
// agent use them: no resync, managedFields dropped from what it caches
// (as upstream's controller-manager does), every list and watch with
// tweak (nil: none), handlers registered before an informer delivers
// sharing one listener. The server's shared cache and the agent's are ones.
func NewTrimmed(client kubernetes.Interface, tweak internalinterfaces.TweakListOptionsFunc) *Factory {
	opts := []informers.SharedInformerOption{cachetrim.Option()}
	if tweak != nil {
		opts = append(opts, informers.WithTweakListOptions(tweak))
	}
	return Wrap(informers.NewSharedInformerFactoryWithOptions(client, 0, opts...), "", tweak)
}

// Wrap muxes the informers of f, which was made with namespace and tweak
// (the typed accessors build their informers with them).
func Wrap(f informers.SharedInformerFactory, namespace string, tweak internalinterfaces.TweakListOptionsFunc) *Factory {
	return &Factory{SharedInformerFactory: f, namespace: namespace, tweak: tweak, wrapped: map[cache.Indexer]*Informer{},
		types: map[reflect.Type]bool{}, resources: map[schema.GroupVersionResource]bool{}}
}

// InformerFor returns the muxed shared informer of obj's type.
func (f *Factory) InformerFor(obj runtime.Object, newFunc internalinterfaces.NewInformerFunc) cache.SharedIndexInformer {
	inf := f.wrap(f.SharedInformerFactory.InformerFor(obj, newFunc))
	f.mu.Lock()
	f.types[reflect.TypeOf(obj)] = true
	f.mu.Unlock()
	return inf
}

// ForResource returns the muxed generic informer of gvr.
func (f *Factory) ForResource(gvr schema.GroupVersionResource) (informers.GenericInformer, error) {
	g, err := f.SharedInformerFactory.ForResource(gvr)
	if err != nil {
		return nil, err
	}
	inf := f.wrap(g.Informer())
	f.mu.Lock()
	f.resources[gvr] = true
	f.mu.Unlock()
	return genericInformer{GenericInformer: g, inf: inf}, nil
}

// Has reports whether an informer of object type typ (InformerFor, the
// typed accessors) or of resource gvr (ForResource) was asked for,
// started or not.
// When f wraps another Factory, that one's informers count too.
func (f *Factory) Has(gvr schema.GroupVersionResource, typ reflect.Type) bool {
	f.mu.Lock()
	has := f.resources[gvr] || (typ != nil && f.types[typ])
	f.mu.Unlock()
	if parent, ok := f.SharedInformerFactory.(*Factory); ok && !has {
		return parent.Has(gvr, typ)
	}
	return has
}

// Close removes every handler added through f from its informers (see
// Informer.Close). The informers keep running: this is how a wrapper of
// a longer-lived Factory hands back what it registered.
func (f *Factory) Close() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	var errs []error
	for _, m := range f.wrapped {
		errs = append(errs, m.Close())
	}
	return errors.Join(errs...)
}

// Handlers is how many handlers share a listener, over all informers.
func (f *Factory) Handlers() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, m := range f.wrapped {
		n += m.Handlers()
	}
	return n
}

func (f *Factory) wrap(inf cache.SharedIndexInformer) *Informer {
	f.mu.Lock()
	defer f.mu.Unlock()
	key := inf.GetIndexer()
	m, ok := f.wrapped[key]
	if !ok {
		m = NewInformer(inf)
		f.wrapped[key] = m
	}
	return m
}

type genericInformer struct {
	informers.GenericInformer
	inf cache.SharedIndexInformer
}

func (g genericInformer) Informer() cache.SharedIndexInformer { return g.inf }

// The group accessors hand the groups this factory, so that their
// informers come from InformerFor above.

func (f *Factory) Admissionregistration() admissionregistration.Interface {
	return admissionregistration.New(f, f.namespace, f.tweak)
}
func (f *Factory) Internal() apiserverinternal.Interface {
	return apiserverinternal.New(f, f.namespace, f.tweak)
}
func (f *Factory) Apps() apps.Interface { return apps.New(f, f.namespace, f.tweak) }
func (f *Factory) Autoscaling() autoscaling.Interface {
	return autoscaling.New(f, f.namespace, f.tweak)
}
func (f *Factory) Batch() batch.Interface { return batch.New(f, f.namespace, f.tweak) }
func (f *Factory) Certificates() certificates.Interface {
	return certificates.New(f, f.namespace, f.tweak)
}
func (f *Factory) Coordination() coordination.Interface {
	return coordination.New(f, f.namespace, f.tweak)
}
func (f *Factory) Core() core.Interface             { return core.New(f, f.namespace, f.tweak) }
func (f *Factory) Discovery() discovery.Interface   { return discovery.New(f, f.namespace, f.tweak) }
func (f *Factory) Events() events.Interface         { return events.New(f, f.namespace, f.tweak) }
func (f *Factory) Extensions() extensions.Interface { return extensions.New(f, f.namespace, f.tweak) }
func (f *Factory) Flowcontrol() flowcontrol.Interface {
	return flowcontrol.New(f, f.namespace, f.tweak)
}
func (f *Factory) Lifecycle() lifecycle.Interface   { return lifecycle.New(f, f.namespace, f.tweak) }
func (f *Factory) Networking() networking.Interface { return networking.New(f, f.namespace, f.tweak) }
func (f *Factory) Node() node.Interface             { return node.New(f, f.namespace, f.tweak) }
func (f *Factory) Policy() policy.Interface         { return policy.New(f, f.namespace, f.tweak) }
func (f *Factory) Rbac() rbac.Interface             { return rbac.New(f, f.namespace, f.tweak) }
func (f *Factory) Resource() resource.Interface     { return resource.New(f, f.namespace, f.tweak) }
func (f *Factory) Scheduling() scheduling.Interface { return scheduling.New(f, f.namespace, f.tweak) }
func (f *Factory) Storage() storage.Interface       { return storage.New(f, f.namespace, f.tweak) }
func (f *Factory) Storagemigration() storagemigration.Interface {
	return storagemigration.New(f, f.namespace, f.tweak)
}

// View is one part's view of a Factory that outlives the part (a
// leadership term's controllers on the server's cache): its informers are the Factory's, Start and
// StartWithContext start the ones the part added for the Factory's life
// (a part's context would end them for good, and a factory never starts
// an informer twice), and Shutdown takes back the part's handlers
// (Close) and leaves the informers running.
type View struct {
	*Factory
	start func()
}

// NewView wraps base for one part; start starts base's informers for
// base's life.
func NewView(base *Factory, start func()) *View {
	return &View{Factory: Wrap(base, base.namespace, base.tweak), start: start}
}

// Start starts the new informers for the Factory's life, whatever stop is.
func (v *View) Start(<-chan struct{}) { v.start() }

// StartWithContext starts the new informers for the Factory's life.
func (v *View) StartWithContext(context.Context) { v.start() }

// Shutdown removes the part's handlers; the informers run on.
func (v *View) Shutdown() { _ = v.Close() }

// Shared is a Factory that the parts of a process share for as long as
// the Shared runs: each part takes a View, whose Start starts what the
// part added until Stop, and whose Shutdown only takes back the part's
// handlers. A type several parts cache is listed, watched and held once.
type Shared struct {
	*Factory
	ctx    context.Context
	cancel context.CancelFunc
}

// NewShared runs f's informers until Stop.
func NewShared(f *Factory) *Shared {
	ctx, cancel := context.WithCancel(context.Background())
	return &Shared{Factory: f, ctx: ctx, cancel: cancel}
}

// Run starts every informer registered so far, until Stop.
func (s *Shared) Run() { s.Factory.StartWithContext(s.ctx) }

// Done is closed by Stop.
func (s *Shared) Done() <-chan struct{} { return s.ctx.Done() }

// Stop ends the informers and waits for them.
func (s *Shared) Stop() {
	s.cancel()
	s.Factory.Shutdown()
}

// View is one part's view of s.
func (s *Shared) View() *View { return NewView(s.Factory, s.Run) }
