package crd

import (
	"context"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/orch/orch/server/registry"
)

// strategy is the registry.Strategy of one custom resource version:
// upstream's customresource strategy over unstructured objects.
type strategy struct {
	namespaced bool
	hasStatus  bool
	schema     *Schema
	table      *table
	selectable []selectableField
}

var _ registry.Strategy = (*strategy)(nil)

func content(obj runtime.Object) map[string]interface{} {
	return obj.(*unstructured.Unstructured).Object
}

func (s *strategy) Default(obj runtime.Object) {
	Default(content(obj), s.schema.Structural)
}

func (s *strategy) PrepareForCreate(_ context.Context, obj runtime.Object) {
	u := obj.(*unstructured.Unstructured)
	if s.hasStatus {
		delete(u.Object, "status")
	}
	u.SetGeneration(1)
}

func (s *strategy) Validate(ctx context.Context, obj runtime.Object) field.ErrorList {
	u := obj.(*unstructured.Unstructured)
	errs := apivalidation.ValidateObjectMetaAccessor(u, s.namespaced, apivalidation.NameIsDNSSubdomain, field.NewPath("metadata"))
	return append(errs, s.schema.Validate(ctx, u.Object, nil)...)
}

func (s *strategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	u, o := obj.(*unstructured.Unstructured), old.(*unstructured.Unstructured)
	if s.hasStatus {
		if st, ok := o.Object["status"]; ok {
			u.Object["status"] = runtime.DeepCopyJSONValue(st)
		} else {
			delete(u.Object, "status")
		}
	}
	u.SetGeneration(o.GetGeneration())
	if !apiequality.Semantic.DeepEqual(withoutMetaStatus(u.Object, s.hasStatus), withoutMetaStatus(o.Object, s.hasStatus)) {
		u.SetGeneration(o.GetGeneration() + 1)
	}
}

// withoutMetaStatus is the content whose change bumps the generation.
func withoutMetaStatus(m map[string]interface{}, dropStatus bool) map[string]interface{} {
	out := make(map[string]interface{}, len(m))
	for k, v := range m {
		if k == "metadata" || (dropStatus && k == "status") {
			continue
		}
		out[k] = v
	}
	return out
}

func (s *strategy) ValidateUpdate(ctx context.Context, obj, old runtime.Object) field.ErrorList {
	u, o := obj.(*unstructured.Unstructured), old.(*unstructured.Unstructured)
	p := field.NewPath("metadata")
	var errs field.ErrorList
	for _, e := range apivalidation.ValidateObjectMetaAccessorUpdate(u, o, p) {
		// resourceVersion preconditions are the API layer's business.
		if e.Field != "metadata.resourceVersion" {
			errs = append(errs, e)
		}
	}
	errs = append(errs, apivalidation.ValidateFinalizers(u.GetFinalizers(), p.Child("finalizers"))...)
	return append(errs, s.schema.Validate(ctx, u.Object, o.Object)...)
}

// PrepareForStatusUpdate keeps everything of old but the status.
func (s *strategy) PrepareForStatusUpdate(_ context.Context, obj, old runtime.Object) {
	u, o := obj.(*unstructured.Unstructured), old.(*unstructured.Unstructured)
	st, ok := u.Object["status"]
	managed, rv := u.GetManagedFields(), u.GetResourceVersion()
	u.Object = runtime.DeepCopyJSON(o.Object)
	u.SetManagedFields(managed)
	u.SetResourceVersion(rv)
	if ok {
		u.Object["status"] = st
	} else {
		delete(u.Object, "status")
	}
}

func (s *strategy) ValidateStatusUpdate(ctx context.Context, obj, old runtime.Object) field.ErrorList {
	return s.ValidateUpdate(ctx, obj, old)
}

func (s *strategy) Fields(obj runtime.Object) fields.Set {
	u := obj.(*unstructured.Unstructured)
	set := fields.Set{"metadata.name": u.GetName(), "metadata.namespace": u.GetNamespace()}
	for _, f := range s.selectable {
		v, _ := f.value(u.Object) // a missing field selects as ""
		set[f.name] = v
	}
	return set
}

func (s *strategy) TableColumns() []metav1.TableColumnDefinition { return s.table.columns() }

func (s *strategy) TableRow(obj runtime.Object) []interface{} {
	return s.table.row(obj.(*unstructured.Unstructured))
}
