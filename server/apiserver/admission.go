package apiserver

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/orch/orch/datastore"
	"github.com/orch/orch/server/admission"
	"github.com/orch/orch/server/auth"
	"github.com/orch/orch/server/registry"
)

// admissionAttributes describes a request to the admission chain.
func (s *Server) admissionAttributes(ctx context.Context, rc *reqCtx, op admission.Operation, obj, old runtime.Object, dryRun bool) *admission.Attributes {
	a := &admission.Attributes{
		Operation:   op,
		Kind:        rc.res.GroupVersion.WithKind(rc.res.Kind),
		Resource:    rc.res.GroupVersion.WithResource(rc.res.Resource),
		Subresource: rc.info.Subresource,
		Namespace:   rc.ns,
		Name:        rc.name,
		Object:      obj,
		OldObject:   old,
		DryRun:      dryRun,
	}
	if obj != nil {
		a.Name = objectMeta(obj).GetName()
		if rc.res.Namespaced {
			a.Namespace = objectMeta(obj).GetNamespace()
		}
	}
	if u, ok := auth.UserFrom(ctx); ok {
		a.User = u
	}
	if rc.res.Conversion != nil {
		a.Equivalents = func() []admission.Equivalent { return s.equivalents(rc.res) }
	}
	switch op {
	case admission.Create:
		a.Options = &metav1.CreateOptions{}
	case admission.Update:
		a.Options = &metav1.UpdateOptions{}
	}
	if dryRun && a.Options != nil {
		switch o := a.Options.(type) {
		case *metav1.CreateOptions:
			o.DryRun = []string{metav1.DryRunAll}
		case *metav1.UpdateOptions:
			o.DryRun = []string{metav1.DryRunAll}
		}
	}
	return a
}

// equivalents are the other served versions of a custom resource with
// several versions, converted by its conversion (matchPolicy Equivalent).
func (s *Server) equivalents(res *registry.Resource) []admission.Equivalent {
	if s.cfg.Dynamic == nil {
		return nil
	}
	var out []admission.Equivalent
	for _, r := range s.cfg.Dynamic.Resources() {
		if r.GroupVersion.Group != res.GroupVersion.Group || r.Resource != res.Resource ||
			r.GroupVersion.Version == res.GroupVersion.Version || r.Conversion == nil {
			continue
		}
		out = append(out, admission.Equivalent{Resource: r.GroupVersion.WithResource(r.Resource),
			Kind: r.GroupVersion.WithKind(r.Kind), Convert: r.Conversion.Convert})
	}
	return out
}

// admit runs the mutating plug-ins and passes their warnings on.
func (s *Server) admit(ctx context.Context, rc *reqCtx, a *admission.Attributes) error {
	if s.cfg.Admission == nil {
		return nil
	}
	err := s.cfg.Admission.Admit(ctx, a)
	s.flushWarnings(rc, a)
	return err
}

// admitAndDefault runs the mutating plug-ins, then defaults (and, for
// custom resources, prunes) what they produced: upstream decodes a
// webhook's or policy's output as it decodes a request body, so a field a
// mutation adds gets its defaults and one the schema does not know is
// dropped.
func (s *Server) admitAndDefault(ctx context.Context, rc *reqCtx, a *admission.Attributes) error {
	if err := s.admit(ctx, rc, a); err != nil {
		return err
	}
	if s.cfg.Admission == nil || a.Object == nil {
		return nil
	}
	if u, ok := a.Object.(*unstructured.Unstructured); ok && rc.res.PruneUnknown != nil {
		rc.res.PruneUnknown(u.Object)
	}
	rc.res.Strategy.Default(a.Object)
	return nil
}

// validateAdmission runs the validating plug-ins and passes their warnings on.
func (s *Server) validateAdmission(ctx context.Context, rc *reqCtx, a *admission.Attributes) error {
	if s.cfg.Admission == nil {
		return nil
	}
	err := s.cfg.Admission.Validate(ctx, a)
	s.flushWarnings(rc, a)
	return err
}

func (s *Server) flushWarnings(rc *reqCtx, a *admission.Attributes) {
	if rc.warn == nil {
		return
	}
	for _, w := range a.Warnings() {
		rc.warn(w)
	}
	a.ResetWarnings()
}

// admitUpdate runs mutating admission on the updated object, then the
// strategy (prepareUpdate), then validating admission. Internal edits
// (modeRaw: binding, finalize, eviction marks) skip admission as they skip
// the strategy.
func (s *Server) admitUpdate(ctx context.Context, rc *reqCtx, mode updateMode, obj, cur runtime.Object, kv *datastore.KV, dryRun bool) (bool, error) {
	if mode == modeRaw || s.cfg.Admission == nil {
		return s.prepareUpdate(ctx, rc, mode, obj, cur, kv)
	}
	m, old := objectMeta(obj), objectMeta(cur)
	if m.GetUID() != "" && m.GetUID() != old.GetUID() {
		return true, apierrors.NewConflict(rc.gr, rc.name, fmt.Errorf("Precondition failed: UID in precondition: %v, UID in object meta: %v", m.GetUID(), old.GetUID()))
	}
	keepSystemFields(m, old)
	setTypeMeta(rc.res, obj)
	rc.res.Strategy.Default(obj)
	attrs := s.admissionAttributes(ctx, rc, admission.Update, obj, cur, dryRun)
	if err := s.admitAndDefault(ctx, rc, attrs); err != nil {
		return false, err
	}
	conditional, err := s.prepareUpdate(ctx, rc, mode, obj, cur, kv)
	if err != nil {
		return conditional, err
	}
	return conditional, s.validateAdmission(ctx, rc, attrs)
}

// admitDelete runs both halves of the chain for a delete, as upstream's
// delete handler does (Object nil, OldObject the stored object).
func (s *Server) admitDelete(ctx context.Context, rc *reqCtx, name string, cur runtime.Object, opts *metav1.DeleteOptions, dryRun bool) error {
	if s.cfg.Admission == nil {
		return nil
	}
	sub := *rc
	sub.name = name
	attrs := s.admissionAttributes(ctx, &sub, admission.Delete, nil, cur, dryRun)
	attrs.Options = opts
	if err := s.admit(ctx, rc, attrs); err != nil {
		return err
	}
	return s.validateAdmission(ctx, rc, attrs)
}
