package handlermux

import (
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/client-go/tools/cache"
)

// Informer is a shared informer whose early event handlers share one
// client-go listener; everything else is the wrapped informer's.
type Informer struct {
	cache.SharedIndexInformer

	mu   sync.Mutex
	reg  cache.ResourceEventHandlerRegistration   // the shared listener, once added
	own  []cache.ResourceEventHandlerRegistration // handlers with listeners of their own
	subs atomic.Pointer[[]*registration]
	// delivered is set by the first notification: from then on a new
	// handler would miss what came before, so it gets its own listener.
	delivered atomic.Bool
}

// NewInformer wraps inf.
func NewInformer(inf cache.SharedIndexInformer) *Informer {
	m := &Informer{SharedIndexInformer: inf}
	m.subs.Store(&[]*registration{})
	return m
}

// registration is a handler sharing the listener.
type registration struct {
	handler cache.ResourceEventHandler
	shared  cache.ResourceEventHandlerRegistration
}

// HasSynced: the shared listener has delivered the initial list, to every
// handler on it.
func (r *registration) HasSynced() bool { return r.shared.HasSynced() }

// HasSyncedChecker is the shared listener's.
func (r *registration) HasSyncedChecker() cache.DoneChecker { return r.shared.HasSyncedChecker() }

// AddEventHandler adds handler to the shared listener while no
// notification has been delivered yet, else gives it its own.
func (m *Informer) AddEventHandler(handler cache.ResourceEventHandler) (cache.ResourceEventHandlerRegistration, error) {
	return m.AddEventHandlerWithOptions(handler, cache.HandlerOptions{})
}

// AddEventHandlerWithResyncPeriod: a handler asking for resyncs gets its
// own listener (the shared one never resyncs).
func (m *Informer) AddEventHandlerWithResyncPeriod(handler cache.ResourceEventHandler, resync time.Duration) (cache.ResourceEventHandlerRegistration, error) {
	return m.AddEventHandlerWithOptions(handler, cache.HandlerOptions{ResyncPeriod: &resync})
}

// AddEventHandlerWithOptions is AddEventHandler; options other than a
// resync period (the logger) are dropped for shared handlers.
func (m *Informer) AddEventHandlerWithOptions(handler cache.ResourceEventHandler, opts cache.HandlerOptions) (cache.ResourceEventHandlerRegistration, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.delivered.Load() || (opts.ResyncPeriod != nil && *opts.ResyncPeriod != 0) {
		reg, err := m.SharedIndexInformer.AddEventHandlerWithOptions(handler, opts)
		if err == nil {
			m.own = append(m.own, reg)
		}
		return reg, err
	}
	if m.reg == nil {
		reg, err := m.SharedIndexInformer.AddEventHandler(fanOut{m})
		if err != nil {
			return nil, err
		}
		m.reg = reg
	}
	r := &registration{handler: handler, shared: m.reg}
	subs := append(append([]*registration(nil), *m.subs.Load()...), r)
	m.subs.Store(&subs)
	return r, nil
}

// RemoveEventHandler removes a shared handler from the fan-out (a
// notification being delivered may still reach it) or an own listener
// from the informer.
func (m *Informer) RemoveEventHandler(handle cache.ResourceEventHandlerRegistration) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	r, ok := handle.(*registration)
	if !ok || r.shared != m.reg {
		m.own = slices.DeleteFunc(m.own, func(o cache.ResourceEventHandlerRegistration) bool { return o == handle })
		return m.SharedIndexInformer.RemoveEventHandler(handle)
	}
	old := *m.subs.Load()
	subs := make([]*registration, 0, len(old))
	for _, s := range old {
		if s != r {
			subs = append(subs, s)
		}
	}
	if len(subs) == len(old) {
		return errors.New("handlermux: handler is not registered")
	}
	m.subs.Store(&subs)
	return nil
}

// Close removes every handler added through m from the informer: the
// shared listener and the handlers' own. The informer keeps running for
// its other handlers (and its other wrappers').
func (m *Informer) Close() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	regs := m.own
	if m.reg != nil {
		regs = append(regs, m.reg)
	}
	var errs []error
	for _, reg := range regs {
		errs = append(errs, m.SharedIndexInformer.RemoveEventHandler(reg))
	}
	m.own, m.reg = nil, nil
	m.subs.Store(&[]*registration{})
	m.delivered.Store(true) // a handler added after Close gets its own listener
	return errors.Join(errs...)
}

// Handlers is how many handlers share the listener.
func (m *Informer) Handlers() int { return len(*m.subs.Load()) }

// fanOut is the one handler client-go knows of.
type fanOut struct{ m *Informer }

// handlers marks the first delivery under the lock AddEventHandler holds,
// so a handler is either in this delivery or gets its own listener.
func (f fanOut) handlers() []*registration {
	if !f.m.delivered.Load() {
		f.m.mu.Lock()
		f.m.delivered.Store(true)
		f.m.mu.Unlock()
	}
	return *f.m.subs.Load()
}

func (f fanOut) OnAdd(obj any, isInInitialList bool) {
	for _, r := range f.handlers() {
		r.handler.OnAdd(obj, isInInitialList)
	}
}

func (f fanOut) OnUpdate(oldObj, newObj any) {
	for _, r := range f.handlers() {
		r.handler.OnUpdate(oldObj, newObj)
	}
}

func (f fanOut) OnDelete(obj any) {
	for _, r := range f.handlers() {
		r.handler.OnDelete(obj)
	}
}
