package apiserver

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/orch/orch/datastore"
	"github.com/orch/orch/server/registry"
)

// updateMode selects the strategy hooks of an update.
type updateMode int

const (
	modeMain   updateMode = iota // the main resource: PrepareForUpdate/ValidateUpdate
	modeStatus                   // the status subresource
	modeRaw                      // internal edits (binding, finalize): no strategy
	modeSub                      // a Resource.Subresources entry (e.g. approval)
)

// maxUpdateAttempts bounds retries of unconditional updates on store conflicts.
const maxUpdateAttempts = 16

// mutateFn builds the desired object from a private copy of the current one.
type mutateFn func(cur runtime.Object) (runtime.Object, error)

// updateResult is what a guaranteed update did.
type updateResult struct {
	obj     runtime.Object
	deleted bool // the update emptied the last finalizer of a deleted object
}

// handleUpdate serves PUT of an object or its status.
func (s *Server) handleUpdate(w http.ResponseWriter, r *http.Request, rc *reqCtx) {
	body, err := s.decodeRequest(w, r, rc, rc.res.GroupVersion.WithKind(rc.res.Kind))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	if err := checkNameAndNamespace(rc, body); err != nil {
		s.writeError(w, r, err)
		return
	}
	dryRun, err := parseDryRun(rc)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	res, err := s.guaranteedUpdate(r.Context(), rc, updateModeOf(rc), dryRun, func(runtime.Object) (runtime.Object, error) {
		return body.DeepCopyObject(), nil
	})
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	s.writeObject(w, r, rc, http.StatusOK, res.obj)
}

// updateModeOf is the mode of an update, patch or apply request: the main
// resource, its status, or another subresource of the Resource.
func updateModeOf(rc *reqCtx) updateMode {
	switch sub := rc.info.Subresource; {
	case sub == "status":
		return modeStatus
	case sub != "" && rc.res.Subresources[sub] != nil:
		return modeSub
	}
	return modeMain
}

// checkNameAndNamespace makes the body's name and namespace agree with the URL.
func checkNameAndNamespace(rc *reqCtx, obj runtime.Object) error {
	m := objectMeta(obj)
	if m.GetName() != rc.name {
		return apierrors.NewBadRequest(fmt.Sprintf("the name of the object (%s) does not match the name on the URL (%s)", m.GetName(), rc.name))
	}
	return matchNamespace(rc, m)
}

// guaranteedUpdate reads the object, applies mutate, checks the
// resourceVersion precondition, runs the strategy and writes with
// compare-and-swap. Store conflicts are retried unless the client gave a
// resourceVersion.
func (s *Server) guaranteedUpdate(ctx context.Context, rc *reqCtx, mode updateMode, dryRun bool, mutate mutateFn) (*updateResult, error) {
	synced := false
	for attempt := 0; ; attempt++ {
		cur, kv, err := s.getStored(ctx, rc.res, rc.ns, rc.name)
		if err != nil {
			if s.resync(ctx, &synced, &err) {
				continue
			}
			return nil, err
		}
		obj, err := mutate(cur.DeepCopyObject())
		if err != nil {
			return nil, err
		}
		if !rc.applying {
			if obj, err = s.trackUpdate(rc, mode, cur, obj); err != nil {
				return nil, err
			}
		}
		conditional, err := s.admitUpdate(ctx, rc, mode, obj, cur, kv, dryRun)
		if err != nil {
			if s.resync(ctx, &synced, &err) {
				continue
			}
			return nil, err
		}
		if dryRun {
			return &updateResult{obj: obj}, nil
		}
		res, err := s.writeUpdate(ctx, rc, mode, obj, cur, kv)
		if errors.Is(err, datastore.ErrConflict) || errors.Is(err, errRetryAllocation) {
			if conditional || attempt >= maxUpdateAttempts {
				conflict := error(apierrors.NewConflict(rc.gr, rc.name, errModified))
				if s.resync(ctx, &synced, &conflict) {
					continue
				}
				return nil, conflict
			}
			continue
		}
		return res, err
	}
}

// prepareUpdate checks preconditions, keeps the system fields of cur and
// runs the strategy's preparation and validation for mode.
func (s *Server) prepareUpdate(ctx context.Context, rc *reqCtx, mode updateMode, obj, cur runtime.Object, kv *datastore.KV) (bool, error) {
	m, old := objectMeta(obj), objectMeta(cur)
	rv, err := parseRV(m.GetResourceVersion())
	if err != nil {
		return false, err
	}
	if rv != 0 && rv != kv.ModRevision {
		return true, apierrors.NewConflict(rc.gr, rc.name, errModified)
	}
	if m.GetUID() != "" && m.GetUID() != old.GetUID() {
		return true, apierrors.NewConflict(rc.gr, rc.name, fmt.Errorf("Precondition failed: UID in precondition: %v, UID in object meta: %v", m.GetUID(), old.GetUID()))
	}
	keepSystemFields(m, old)
	setTypeMeta(rc.res, obj)
	st := rc.res.Strategy
	var errs = validateKeyName(m.GetName())
	switch mode {
	case modeMain:
		st.Default(obj)
		st.PrepareForUpdate(ctx, obj, cur)
		errs = append(errs, st.ValidateUpdate(ctx, obj, cur)...)
	case modeStatus:
		st.Default(obj)
		st.PrepareForStatusUpdate(ctx, obj, cur)
		errs = append(errs, st.ValidateStatusUpdate(ctx, obj, cur)...)
	case modeSub:
		sub := rc.res.Subresources[rc.info.Subresource]
		sub.PrepareForUpdate(ctx, obj, cur)
		errs = append(errs, sub.ValidateUpdate(ctx, obj, cur)...)
	}
	if len(errs) > 0 {
		return rv != 0, apierrors.NewInvalid(rc.res.GroupVersion.WithKind(rc.res.Kind).GroupKind(), rc.name, errs)
	}
	return rv != 0, nil
}

// keepSystemFields copies what clients cannot change from the stored object.
func keepSystemFields(m, old metav1.Object) {
	m.SetUID(old.GetUID())
	m.SetName(old.GetName())
	m.SetNamespace(old.GetNamespace())
	m.SetCreationTimestamp(old.GetCreationTimestamp())
	m.SetDeletionTimestamp(old.GetDeletionTimestamp())
	m.SetDeletionGracePeriodSeconds(old.GetDeletionGracePeriodSeconds())
	m.SetGeneration(old.GetGeneration())
	m.SetSelfLink("")
}

// writeUpdate stores obj over kv (or deletes it when the update finished a
// pending deletion). A no-op update writes nothing.
func (s *Server) writeUpdate(ctx context.Context, rc *reqCtx, mode updateMode, obj, cur runtime.Object, kv *datastore.KV) (*updateResult, error) {
	key := rc.res.Key(rc.ns, rc.name)
	if shouldDeleteDuringUpdate(rc.res, obj, cur) {
		ops := append(releaseOps(rc.res, cur), datastore.Op{Type: datastore.OpDelete, Key: key, ExpectedRev: kv.ModRevision})
		rev, err := s.store.Txn(ctx, ops)
		if err != nil {
			return nil, err
		}
		return &updateResult{obj: obj, deleted: true}, setResourceVersion(obj, rev)
	}
	data, err := encodeStored(rc.res, obj)
	if err != nil {
		return nil, err
	}
	if bytes.Equal(data, kv.Value) {
		return &updateResult{obj: cur}, nil
	}
	var ops []datastore.Op
	if a, ok := rc.res.Strategy.(registry.Allocator); ok && mode == modeMain {
		if ops, err = a.AllocateOnUpdate(ctx, s.store, obj, cur); err != nil {
			return nil, allocError(err, rc.res, rc.name)
		}
		if data, err = encodeStored(rc.res, obj); err != nil {
			return nil, err
		}
	}
	ops = append(ops, datastore.Op{Type: datastore.OpUpdate, Key: key, Value: data, ExpectedRev: kv.ModRevision})
	rev, err := s.store.Txn(ctx, ops)
	if errors.Is(err, datastore.ErrKeyExists) {
		return nil, errRetryAllocation
	}
	if errors.Is(err, datastore.ErrNotFound) {
		return nil, datastore.ErrConflict // deleted meanwhile: re-read gives the 404
	}
	if err != nil {
		return nil, err
	}
	return &updateResult{obj: obj}, setResourceVersion(obj, rev)
}

func releaseOps(res *registry.Resource, obj runtime.Object) []datastore.Op {
	if a, ok := res.Strategy.(registry.Allocator); ok {
		return a.ReleaseOnDelete(obj)
	}
	return nil
}

// shouldDeleteDuringUpdate is upstream's rule: a deleted object whose last
// finalizer was removed goes away (namespaces also wait for spec.finalizers).
func shouldDeleteDuringUpdate(res *registry.Resource, obj, old runtime.Object) bool {
	m, om := objectMeta(obj), objectMeta(old)
	if m.GetDeletionTimestamp() == nil || len(m.GetFinalizers()) > 0 {
		return false
	}
	if ns, ok := obj.(*corev1.Namespace); ok {
		return len(ns.Spec.Finalizers) == 0
	}
	g := om.GetDeletionGracePeriodSeconds()
	return g != nil && *g == 0
}
