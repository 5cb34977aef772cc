package apiserver

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/orch/orch/datastore"
	"github.com/orch/orch/server/registry"
)

// namespaceRecheckInterval is how often terminating namespaces are looked
// at again while some still hold objects. Nothing polls when none does.
const namespaceRecheckInterval = 5 * time.Second

// RunNamespaceLifecycle finalizes deleted namespaces until ctx ends, like
// kube-controller-manager's namespace controller: for every namespace with a
// deletionTimestamp it deletes the objects in it and, once it is empty,
// removes the "kubernetes" finalizer and then the namespace. It is
// level-based: it lists namespaces, then follows a watch from the list
// revision, reconciling on every event about a terminating namespace, every
// namespaceRecheckInterval while one is still not empty, and after
// re-listing when the watch ends. Run it on the Raft leader only.
func (s *Server) RunNamespaceLifecycle(ctx context.Context) {
	log := s.log.Named("namespace-lifecycle")
	res := findResource(s.cfg.Resources, "", "namespaces")
	if res == nil {
		log.Warn("namespaces are not served; namespace lifecycle not running")
		return
	}
	for ctx.Err() == nil {
		rev, pending, err := s.reconcileNamespaces(ctx, log, res)
		if err != nil {
			log.Warn("reconcile namespaces", zap.Error(err))
			sleepCtx(ctx, namespaceRecheckInterval)
			continue
		}
		ch, err := s.cfg.Store.Watch(ctx, res.Prefix(""), rev)
		if err != nil {
			log.Warn("watch namespaces", zap.Error(err))
			sleepCtx(ctx, namespaceRecheckInterval)
			continue
		}
		s.followNamespaces(ctx, log, res, ch, pending)
	}
}

// followNamespaces reconciles on relevant watch events and, while pending,
// on a timer. It returns when the watch channel closes or ctx ends.
func (s *Server) followNamespaces(ctx context.Context, log *zap.Logger, res *registry.Resource, ch <-chan datastore.Event, pending bool) {
	timer := time.NewTimer(namespaceRecheckInterval)
	defer timer.Stop()
	for {
		if !timer.Stop() {
			select {
			case <-timer.C:
			default:
			}
		}
		var tick <-chan time.Time
		if pending {
			timer.Reset(namespaceRecheckInterval)
			tick = timer.C
		}
		select {
		case <-ctx.Done():
			return
		case ev, ok := <-ch:
			if !ok {
				return
			}
			if !isTerminatingEvent(res, ev) {
				continue
			}
		case <-tick:
		}
		var err error
		if _, pending, err = s.reconcileNamespaces(ctx, log, res); err != nil {
			log.Warn("reconcile namespaces", zap.Error(err))
			pending = true
		}
	}
}

// isTerminatingEvent is true for a put of a namespace with a deletionTimestamp.
func isTerminatingEvent(res *registry.Resource, ev datastore.Event) bool {
	if ev.Type == datastore.EventDelete {
		return false
	}
	obj, err := decodeStored(res, &ev.KV)
	if err != nil {
		return true // let the reconcile report it
	}
	return objectMeta(obj).GetDeletionTimestamp() != nil
}

// reconcileNamespaces lists namespaces and advances every terminating one.
// It returns the list revision and whether some namespace is still terminating.
func (s *Server) reconcileNamespaces(ctx context.Context, log *zap.Logger, res *registry.Resource) (int64, bool, error) {
	list, err := s.cfg.Store.List(ctx, res.Prefix(""), "", 0)
	if err != nil {
		return 0, false, fmt.Errorf("list namespaces: %w", err)
	}
	pending := false
	for i := range list.KVs {
		obj, err := decodeStored(res, &list.KVs[i])
		if err != nil {
			log.Error("undecodable namespace", zap.String("key", list.KVs[i].Key), zap.Error(err))
			continue
		}
		ns := obj.(*corev1.Namespace)
		if ns.DeletionTimestamp == nil {
			continue
		}
		done, err := s.finalizeNamespace(ctx, log, res, ns, list.KVs[i].ModRevision)
		if err != nil {
			log.Warn("finalize namespace", zap.String("namespace", ns.Name), zap.Error(err))
		}
		if !done {
			pending = true
		}
	}
	return list.Revision, pending, nil
}

func sleepCtx(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

// protectedNamespaces may not be deleted, as upstream's NamespaceLifecycle
// admission plugin enforces.
var protectedNamespaces = map[string]bool{
	metav1.NamespaceDefault: true, metav1.NamespaceSystem: true, metav1.NamespacePublic: true,
}

// namespaceDeleteForbidden is the error for deleting a namespace that must
// stay (upstream's 403 `namespaces "default" is forbidden: this namespace may
// not be deleted`), nil for any other.
func namespaceDeleteForbidden(name string) error {
	if !protectedNamespaces[name] {
		return nil
	}
	return apierrors.NewForbidden(schema.GroupResource{Resource: "namespaces"}, name,
		errors.New("this namespace may not be deleted"))
}

// checkNamespaceForCreate is upstream's NamespaceLifecycle admission for a
// create in namespace ns: NotFound when it does not exist, Forbidden (with
// cause NamespaceTerminating) while it is being deleted.
func (s *Server) checkNamespaceForCreate(ctx context.Context, ns string) error {
	res := findResource(s.cfg.Resources, "", "namespaces")
	if res == nil || ns == "" {
		return nil
	}
	kv, err := s.cfg.Store.Get(ctx, res.Key("", ns))
	if errors.Is(err, datastore.ErrNotFound) {
		// A namespace just created through another server may not have
		// reached this one: confirm with a quorum read before a 404
		// (test/reliability found one on a create right after its
		// namespace's).
		if serr := s.syncRead(ctx, ""); serr != nil {
			return serr
		}
		kv, err = s.cfg.Store.Get(ctx, res.Key("", ns))
	}
	if errors.Is(err, datastore.ErrNotFound) {
		return apierrors.NewNotFound(schema.GroupResource{Resource: "namespaces"}, ns)
	} else if err != nil {
		return fmt.Errorf("read namespace %s: %w", ns, err)
	}
	terminating, err := s.nsTerminating.get(res, kv)
	if err != nil || !terminating {
		return err
	}
	e := apierrors.NewForbidden(schema.GroupResource{Resource: "namespaces"}, ns,
		fmt.Errorf("unable to create new content in namespace %s because it is being terminated", ns))
	e.ErrStatus.Details.Causes = append(e.ErrStatus.Details.Causes, metav1.StatusCause{
		Type: corev1.NamespaceTerminatingCause, Message: fmt.Sprintf("namespace %s is being terminated", ns), Field: "metadata.namespace",
	})
	return e
}

// terminatingCache remembers whether each namespace, at the revision last
// read, has a deletionTimestamp: every namespaced create asks, and
// decoding the namespace each time is a measurable share of a create.
type terminatingCache struct {
	mu sync.Mutex
	m  map[string]nsState
}

type nsState struct {
	rev         int64
	terminating bool
}

// maxTerminatingCache bounds the cache; when full it starts over.
const maxTerminatingCache = 4096

func (c *terminatingCache) get(res *registry.Resource, kv *datastore.KV) (bool, error) {
	c.mu.Lock()
	st, ok := c.m[kv.Key]
	c.mu.Unlock()
	if ok && st.rev == kv.ModRevision {
		return st.terminating, nil
	}
	obj, err := decodeStored(res, kv)
	if err != nil {
		return false, err
	}
	st = nsState{rev: kv.ModRevision, terminating: objectMeta(obj).GetDeletionTimestamp() != nil}
	c.mu.Lock()
	if c.m == nil || len(c.m) >= maxTerminatingCache {
		c.m = map[string]nsState{}
	}
	c.m[kv.Key] = st
	c.mu.Unlock()
	return st.terminating, nil
}
