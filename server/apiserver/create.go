package apiserver

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/validation/path"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilrand "k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/orch/orch/datastore"
	"github.com/orch/orch/server/admission"
	"github.com/orch/orch/server/registry"
)

// maxCreateAttempts bounds retries of generated names and allocations.
const maxCreateAttempts = 8

// handleCreate serves POST to a collection.
func (s *Server) handleCreate(w http.ResponseWriter, r *http.Request, rc *reqCtx) {
	if rc.res.Terminating != nil && rc.res.Terminating() {
		s.writeError(w, r, &apierrors.StatusError{ErrStatus: metav1.Status{Status: metav1.StatusFailure,
			Code: http.StatusMethodNotAllowed, Reason: metav1.StatusReasonMethodNotAllowed,
			Message: "create not allowed while custom resource definition is terminating"}})
		return
	}
	obj, err := s.decodeRequest(w, r, rc, rc.res.GroupVersion.WithKind(rc.res.Kind))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	dryRun, err := parseDryRun(rc)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	out, err := s.create(r.Context(), rc, obj, dryRun)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	s.writeObject(w, r, rc, http.StatusCreated, out)
}

// decodeRequest reads and decodes the body as gvk.
func (s *Server) decodeRequest(w http.ResponseWriter, r *http.Request, rc *reqCtx, gvk schema.GroupVersionKind) (runtime.Object, error) {
	format, err := requestFormat(r)
	if err != nil {
		return nil, err
	}
	data, err := s.readBody(w, r)
	if err != nil {
		return nil, err
	}
	return s.decodeInto(w, rc, data, format, gvk)
}

func parseDryRun(rc *reqCtx) (bool, error) {
	for _, v := range rc.query["dryRun"] {
		if v != "All" {
			return false, apierrors.NewBadRequest(fmt.Sprintf("dryRun: unsupported value %q (only All is supported)", v))
		}
		return true, nil
	}
	return false, nil
}

// create runs the create path: namespace checks, system fields, defaults,
// preparation, validation, then the store write with allocations.
func (s *Server) create(ctx context.Context, rc *reqCtx, obj runtime.Object, dryRun bool) (runtime.Object, error) {
	m := objectMeta(obj)
	if err := matchNamespace(rc, m); err != nil {
		return nil, err
	}
	if rc.res.Namespaced {
		if err := s.checkNamespaceForCreate(ctx, m.GetNamespace()); err != nil {
			return nil, err
		}
	}
	generated := m.GetName() == "" && m.GetGenerateName() != ""
	setCreateFields(m)
	rc.res.Strategy.Default(obj)
	if applied, _ := ctx.Value(applyCreateKey{}).(bool); !applied {
		tracked, err := s.trackCreate(rc, obj)
		if err != nil {
			return nil, err
		}
		obj, m = tracked, objectMeta(tracked)
	}
	if err := s.admitMutating(ctx, rc, obj); err != nil {
		return nil, err
	}
	attrs := s.admissionAttributes(ctx, rc, admission.Create, obj, nil, dryRun)
	if err := s.admitAndDefault(ctx, rc, attrs); err != nil {
		return nil, err
	}
	rc.res.Strategy.PrepareForCreate(ctx, obj)
	if err := validateCreate(ctx, rc.res, obj); err != nil {
		return nil, err
	}
	if err := s.validateAdmission(ctx, rc, attrs); err != nil {
		return nil, err
	}
	if dryRun {
		return obj, nil
	}
	// Each attempt writes a fresh copy: values an allocator chose in a lost
	// race must be chosen anew, not taken for values the client asked for.
	for attempt := 0; ; attempt++ {
		try := obj.DeepCopyObject()
		rev, err := s.createOnce(ctx, rc.res, try)
		if err == nil {
			return try, setResourceVersion(try, rev)
		}
		retry := errors.Is(err, errRetryAllocation) || (generated && apierrors.IsAlreadyExists(err))
		if !retry || attempt >= maxCreateAttempts {
			if errors.Is(err, errRetryAllocation) {
				return nil, apierrors.NewInternalError(fmt.Errorf("allocating values for %s %q kept conflicting; try again", rc.res.Kind, m.GetName()))
			}
			return nil, err
		}
		if generated {
			m.SetName(generateName(m.GetGenerateName()))
		}
	}
}

var errRetryAllocation = errors.New("allocation conflict")

// createOnce writes obj (with its allocation ops) in one transaction.
func (s *Server) createOnce(ctx context.Context, res *registry.Resource, obj runtime.Object) (int64, error) {
	m := objectMeta(obj)
	var ops []datastore.Op
	if a, ok := res.Strategy.(registry.Allocator); ok {
		aops, err := a.AllocateOnCreate(ctx, s.store, obj)
		if err != nil {
			return 0, allocError(err, res, m.GetName())
		}
		ops = aops
	}
	qops, err := s.quotaOps(ctx, res, obj)
	if err != nil {
		return 0, err
	}
	ops = append(ops, qops...)
	data, err := encodeStored(res, obj)
	if err != nil {
		return 0, err
	}
	key := res.Key(m.GetNamespace(), m.GetName())
	ops = append(ops, datastore.Op{Type: datastore.OpCreate, Key: key, Value: data})
	rev, err := s.store.Txn(ctx, ops)
	if errors.Is(err, datastore.ErrKeyExists) {
		if len(ops) == 1 {
			return 0, apierrors.NewAlreadyExists(groupResource(res), m.GetName())
		}
		if _, gerr := s.store.Get(ctx, key); gerr == nil {
			return 0, apierrors.NewAlreadyExists(groupResource(res), m.GetName())
		}
		return 0, errRetryAllocation
	}
	if errors.Is(err, datastore.ErrConflict) && len(qops) > 0 {
		return 0, errRetryAllocation // a quota was charged concurrently
	}
	if err != nil {
		return 0, storeError(err, groupResource(res), m.GetName())
	}
	return rev, nil
}

// allocError keeps API errors from an allocator (e.g. 422 for a taken port)
// and wraps the rest.
func allocError(err error, res *registry.Resource, name string) error {
	var st apierrors.APIStatus
	if errors.As(err, &st) {
		return err
	}
	if errors.Is(err, datastore.ErrConflict) || errors.Is(err, datastore.ErrKeyExists) {
		return errRetryAllocation
	}
	return fmt.Errorf("allocate for %s %q: %w", res.Kind, name, err)
}

// matchNamespace sets the object's namespace from the path, or fails when
// the body names another one. Cluster-scoped objects get none.
func matchNamespace(rc *reqCtx, m metav1.Object) error {
	switch {
	case !rc.res.Namespaced:
		m.SetNamespace("")
	case m.GetNamespace() == "":
		m.SetNamespace(rc.ns)
	case m.GetNamespace() != rc.ns:
		return apierrors.NewBadRequest(fmt.Sprintf("the namespace of the provided object (%s) does not match the namespace sent on the request (%s)", m.GetNamespace(), rc.ns))
	}
	return nil
}

func setCreateFields(m metav1.Object) {
	if m.GetName() == "" && m.GetGenerateName() != "" {
		m.SetName(generateName(m.GetGenerateName()))
	}
	m.SetResourceVersion("")
	m.SetUID(uuid.NewUUID())
	m.SetCreationTimestamp(metav1.NewTime(time.Now().Truncate(time.Second)))
	m.SetDeletionTimestamp(nil)
	m.SetDeletionGracePeriodSeconds(nil)
	m.SetSelfLink("")
}

// generateName appends 5 random characters to base, as upstream's
// SimpleNameGenerator (base cut to keep the name within 63 characters).
func generateName(base string) string {
	const maxGeneratedNameLength = 63 - 5
	if len(base) > maxGeneratedNameLength {
		base = base[:maxGeneratedNameLength]
	}
	return base + utilrand.String(5)
}

// validateCreate checks the name can be a key, then the strategy's rules.
func validateCreate(ctx context.Context, res *registry.Resource, obj runtime.Object) error {
	m := objectMeta(obj)
	errs := validateKeyName(m.GetName())
	if len(errs) == 0 {
		errs = res.Strategy.Validate(ctx, obj)
	}
	if len(errs) > 0 {
		return apierrors.NewInvalid(res.GroupVersion.WithKind(res.Kind).GroupKind(), m.GetName(), errs)
	}
	return nil
}

func validateKeyName(name string) field.ErrorList {
	p := field.NewPath("metadata", "name")
	if name == "" {
		return field.ErrorList{field.Required(p, "name or generateName is required")}
	}
	var errs field.ErrorList
	for _, msg := range path.IsValidPathSegmentName(name) {
		errs = append(errs, field.Invalid(p, name, msg))
	}
	return errs
}
