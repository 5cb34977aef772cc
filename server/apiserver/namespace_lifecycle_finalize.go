package apiserver

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	"github.com/orch/orch/datastore"
	"github.com/orch/orch/server/registry"
)

// finalizeNamespace advances one terminating namespace: it deletes what is
// left in it and, when nothing is, drops the "kubernetes" finalizer and, if
// no finalizer remains, the namespace. done reports that the namespace is
// gone or waits only on finalizers of others.
func (s *Server) finalizeNamespace(ctx context.Context, log *zap.Logger, res *registry.Resource, ns *corev1.Namespace, rev int64) (bool, error) {
	if !hasKubernetesFinalizer(ns) {
		if len(ns.Spec.Finalizers) > 0 || len(ns.Finalizers) > 0 {
			return true, nil // waiting on someone else's finalizer
		}
		return s.deleteNamespaceKey(ctx, log, res, ns.Name, rev)
	}
	sum, err := s.deleteNamespaceContent(ctx, log, ns.Name)
	ns = ns.DeepCopy()
	changed := setNamespaceConditions(ns, sum, time.Now())
	if err != nil || sum.left() > 0 {
		log.Debug("namespace not empty yet", zap.String("namespace", ns.Name), zap.Int("objects", sum.left()))
		if changed {
			if werr := s.writeNamespace(ctx, res, ns, rev); werr != nil {
				return false, errors.Join(err, werr)
			}
		}
		return false, err
	}
	var keep []corev1.FinalizerName
	for _, f := range ns.Spec.Finalizers {
		if f != corev1.FinalizerKubernetes {
			keep = append(keep, f)
		}
	}
	ns.Spec.Finalizers = keep
	ns.Status.Phase = corev1.NamespaceTerminating
	newRev, err := s.writeNamespaceRev(ctx, res, ns, rev)
	if err != nil {
		return false, err
	}
	if len(keep) > 0 || len(ns.Finalizers) > 0 {
		return true, nil
	}
	return s.deleteNamespaceKey(ctx, log, res, ns.Name, newRev)
}

func (s *Server) writeNamespace(ctx context.Context, res *registry.Resource, ns *corev1.Namespace, rev int64) error {
	_, err := s.writeNamespaceRev(ctx, res, ns, rev)
	return err
}

func (s *Server) writeNamespaceRev(ctx context.Context, res *registry.Resource, ns *corev1.Namespace, rev int64) (int64, error) {
	data, err := encodeStored(res, ns)
	if err != nil {
		return 0, err
	}
	newRev, err := s.cfg.Store.Update(ctx, res.Key("", ns.Name), data, rev)
	if err != nil {
		return 0, fmt.Errorf("update namespace %s: %w", ns.Name, err)
	}
	return newRev, nil
}

func hasKubernetesFinalizer(ns *corev1.Namespace) bool {
	for _, f := range ns.Spec.Finalizers {
		if f == corev1.FinalizerKubernetes {
			return true
		}
	}
	return false
}

func (s *Server) deleteNamespaceKey(ctx context.Context, log *zap.Logger, res *registry.Resource, name string, rev int64) (bool, error) {
	_, _, err := s.cfg.Store.Delete(ctx, res.Key("", name), rev)
	if err != nil && !errors.Is(err, datastore.ErrNotFound) {
		return false, fmt.Errorf("delete namespace %s: %w", name, err)
	}
	log.Info("namespace deleted", zap.String("namespace", name))
	return true, nil
}

// contentSummary is what is left in a terminating namespace.
type contentSummary struct {
	remaining  map[string]int // group-resource -> objects left
	finalizers map[string]int // finalizer -> objects holding it
	failed     []string       // resources whose deletion failed
}

func (c *contentSummary) left() int {
	n := 0
	for _, v := range c.remaining {
		n += v
	}
	return n
}

// deleteNamespaceContent deletes every object of every namespaced resource
// in ns and summarizes what is left: objects with finalizers get a
// deletionTimestamp and stay until their finalizers are removed, pods
// running on a node are deleted gracefully and stay until their agent
// has stopped them. Pods go first: while any remains, nothing else is
// deleted (upstream's OrderedNamespaceDeletion), so a pod never outlives
// the Secrets, ConfigMaps or ServiceAccount it runs with.
func (s *Server) deleteNamespaceContent(ctx context.Context, log *zap.Logger, ns string) (*contentSummary, error) {
	sum := &contentSummary{remaining: map[string]int{}, finalizers: map[string]int{}}
	var errs []error
	var rest []*registry.Resource
	for _, r := range s.allResources() {
		if !r.Namespaced || r.Verbs != nil || r.StoredAs != nil {
			continue
		}
		if r.GroupVersion.Group == "" && r.Resource == "pods" {
			errs = append(errs, s.deleteAllOf(ctx, r, ns, sum))
		} else {
			rest = append(rest, r)
		}
	}
	if sum.remaining["pods"] == 0 {
		for _, r := range rest {
			errs = append(errs, s.deleteAllOf(ctx, r, ns, sum))
		}
	}
	if err := errors.Join(errs...); err != nil {
		log.Debug("some deletes failed; retrying later", zap.Error(err))
		return sum, err
	}
	return sum, nil
}

// deleteAllOf deletes the objects of r in ns, adding what is left to sum.
func (s *Server) deleteAllOf(ctx context.Context, r *registry.Resource, ns string, sum *contentSummary) error {
	var errs []error
	gr := r.GroupVersion.WithResource(r.Resource).GroupResource().String()
	list, err := s.cfg.Store.List(ctx, r.Prefix(ns), "", 0)
	if err != nil {
		sum.remaining[gr]++
		sum.failed = append(sum.failed, gr)
		return fmt.Errorf("list %s in %s: %w", r.Resource, ns, err)
	}
	for i := range list.KVs {
		gone, fins, err := s.deleteInNamespace(ctx, r, &list.KVs[i])
		if err != nil {
			errs = append(errs, err)
			if !slices.Contains(sum.failed, gr) {
				sum.failed = append(sum.failed, gr)
			}
		}
		if !gone {
			sum.remaining[gr]++
		}
		for _, f := range fins {
			sum.finalizers[f]++
		}
	}
	return errors.Join(errs...)
}

// deleteInNamespace deletes one object (releasing what its strategy
// allocated) or, when it has finalizers or is a pod running on a node,
// marks it deleted. It returns whether it is gone and its finalizers.
func (s *Server) deleteInNamespace(ctx context.Context, r *registry.Resource, kv *datastore.KV) (bool, []string, error) {
	obj, err := decodeStored(r, kv)
	if err != nil {
		return false, nil, err
	}
	m := objectMeta(obj)
	grace := gracePeriod(obj, &metav1.DeleteOptions{})
	if grace > 0 && !s.nodeGone(ctx, obj) {
		if m.GetDeletionTimestamp() != nil {
			return false, m.GetFinalizers(), nil
		}
		return false, m.GetFinalizers(), s.markInNamespace(ctx, r, kv, obj, grace)
	}
	if len(m.GetFinalizers()) > 0 {
		if m.GetDeletionTimestamp() != nil && ptr.Deref(m.GetDeletionGracePeriodSeconds(), 0) == 0 {
			return false, m.GetFinalizers(), nil
		}
		return false, m.GetFinalizers(), s.markInNamespace(ctx, r, kv, obj, 0)
	}
	return s.removeInNamespace(ctx, r, kv, obj)
}

// nodeGone tells whether obj is a pod bound to a Node that does not exist
// (no agent will ever finish it: it is deleted at once, as pod GC would).
func (s *Server) nodeGone(ctx context.Context, obj runtime.Object) bool {
	pod, ok := obj.(*corev1.Pod)
	nodes := findResource(s.cfg.Resources, "", "nodes")
	if !ok || nodes == nil || pod.Spec.NodeName == "" {
		return false
	}
	_, err := s.cfg.Store.Get(ctx, nodes.Key("", pod.Spec.NodeName))
	return errors.Is(err, datastore.ErrNotFound)
}

// markInNamespace sets the deletion marks (grace seconds from now).
func (s *Server) markInNamespace(ctx context.Context, r *registry.Resource, kv *datastore.KV, obj runtime.Object, grace int64) error {
	m := objectMeta(obj)
	now := metav1.NewTime(time.Now().Truncate(time.Second).Add(time.Duration(grace) * time.Second))
	m.SetDeletionTimestamp(&now)
	m.SetDeletionGracePeriodSeconds(&grace)
	data, err := encodeStored(r, obj)
	if err != nil {
		return err
	}
	if _, err := s.cfg.Store.Update(ctx, kv.Key, data, kv.ModRevision); err != nil && !errors.Is(err, datastore.ErrNotFound) && !errors.Is(err, datastore.ErrConflict) {
		return fmt.Errorf("mark %s deleted: %w", kv.Key, err)
	}
	return nil
}

// removeInNamespace deletes one object and what its strategy allocated.
func (s *Server) removeInNamespace(ctx context.Context, r *registry.Resource, kv *datastore.KV, obj runtime.Object) (bool, []string, error) {
	ops := []datastore.Op{{Type: datastore.OpDelete, Key: kv.Key, ExpectedRev: kv.ModRevision}}
	if a, ok := r.Strategy.(registry.Allocator); ok {
		ops = append(ops, a.ReleaseOnDelete(obj)...)
	}
	_, err := s.cfg.Store.Txn(ctx, ops)
	switch {
	case err == nil:
		return true, nil, nil
	case errors.Is(err, datastore.ErrNotFound) && len(ops) > 1:
		// A reservation was already gone: delete the object alone rather than
		// keep the namespace terminating forever.
		if _, _, err := s.cfg.Store.Delete(ctx, kv.Key, kv.ModRevision); err != nil && !errors.Is(err, datastore.ErrNotFound) {
			return false, nil, fmt.Errorf("delete %s: %w", kv.Key, err)
		}
		return true, nil, nil
	case errors.Is(err, datastore.ErrNotFound):
		return true, nil, nil
	case errors.Is(err, datastore.ErrConflict):
		return false, nil, nil // changed meanwhile: the next pass sees it
	}
	return false, nil, fmt.Errorf("delete %s: %w", kv.Key, err)
}
