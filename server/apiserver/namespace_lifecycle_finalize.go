package apiserver

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

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
	left, err := s.deleteNamespaceContent(ctx, log, ns.Name)
	if err != nil || left > 0 {
		if left > 0 {
			log.Debug("namespace not empty yet", zap.String("namespace", ns.Name), zap.Int("objects", left))
		}
		return false, err
	}
	ns = ns.DeepCopy()
	var keep []corev1.FinalizerName
	for _, f := range ns.Spec.Finalizers {
		if f != corev1.FinalizerKubernetes {
			keep = append(keep, f)
		}
	}
	ns.Spec.Finalizers = keep
	ns.Status.Phase = corev1.NamespaceTerminating
	data, err := encodeStored(res, ns)
	if err != nil {
		return false, err
	}
	newRev, err := s.cfg.Store.Update(ctx, res.Key("", ns.Name), data, rev)
	if err != nil {
		return false, fmt.Errorf("remove finalizer of namespace %s: %w", ns.Name, err)
	}
	if len(keep) > 0 || len(ns.Finalizers) > 0 {
		return true, nil
	}
	return s.deleteNamespaceKey(ctx, log, res, ns.Name, newRev)
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

// deleteNamespaceContent deletes every object of every namespaced resource
// in ns and returns how many are left: objects with finalizers get a
// deletionTimestamp and stay until their finalizers are removed.
// Pods are deleted at once (grace period 0): there is no kubelet handshake yet.
func (s *Server) deleteNamespaceContent(ctx context.Context, log *zap.Logger, ns string) (int, error) {
	left := 0
	var errs []error
	for _, r := range s.cfg.Resources {
		if !r.Namespaced {
			continue
		}
		list, err := s.cfg.Store.List(ctx, r.Prefix(ns), "", 0)
		if err != nil {
			return left + 1, fmt.Errorf("list %s in %s: %w", r.Resource, ns, err)
		}
		for i := range list.KVs {
			gone, err := s.deleteInNamespace(ctx, r, &list.KVs[i])
			if err != nil {
				errs = append(errs, err)
			}
			if !gone {
				left++
			}
		}
	}
	if len(errs) > 0 {
		log.Debug("some deletes failed; retrying later", zap.Int("failed", len(errs)))
	}
	return left, errors.Join(errs...)
}

// deleteInNamespace deletes one object (releasing what its strategy
// allocated) or, when it has finalizers, marks it deleted.
func (s *Server) deleteInNamespace(ctx context.Context, r *registry.Resource, kv *datastore.KV) (bool, error) {
	obj, err := decodeStored(r, kv)
	if err != nil {
		return false, err
	}
	m := objectMeta(obj)
	if len(m.GetFinalizers()) > 0 {
		if m.GetDeletionTimestamp() != nil {
			return false, nil
		}
		now := metav1.NewTime(time.Now().Truncate(time.Second))
		m.SetDeletionTimestamp(&now)
		var zero int64
		m.SetDeletionGracePeriodSeconds(&zero)
		data, err := encodeStored(r, obj)
		if err != nil {
			return false, err
		}
		if _, err := s.cfg.Store.Update(ctx, kv.Key, data, kv.ModRevision); err != nil && !errors.Is(err, datastore.ErrNotFound) {
			return false, fmt.Errorf("mark %s deleted: %w", kv.Key, err)
		}
		return false, nil
	}
	ops := []datastore.Op{{Type: datastore.OpDelete, Key: kv.Key, ExpectedRev: kv.ModRevision}}
	if a, ok := r.Strategy.(registry.Allocator); ok {
		ops = append(ops, a.ReleaseOnDelete(obj)...)
	}
	_, err = s.cfg.Store.Txn(ctx, ops)
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, datastore.ErrNotFound) && len(ops) > 1:
		// A reservation was already gone: delete the object alone rather than
		// keep the namespace terminating forever.
		if _, _, err := s.cfg.Store.Delete(ctx, kv.Key, kv.ModRevision); err != nil && !errors.Is(err, datastore.ErrNotFound) {
			return false, fmt.Errorf("delete %s: %w", kv.Key, err)
		}
		return true, nil
	case errors.Is(err, datastore.ErrNotFound):
		return true, nil
	}
	return false, fmt.Errorf("delete %s: %w", kv.Key, err)
}
