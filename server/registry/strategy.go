package registry

import (
	"context"
	"reflect"
	"time"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// rules are the type-specific hooks of one resource. Every nil hook falls back
// to the generic behaviour of strategy, so a resource with empty rules still
// gets metadata validation, Name/Age printing and metadata field selectors.
type rules struct {
	namespaced bool
	hasStatus  bool
	// generation: PrepareForCreate sets metadata.generation to 1 and
	// PrepareForUpdate bumps it when spec changes (types upstream does it for).
	generation bool
	// keepStatusOnCreate: a create may set status (nodes, registered by their agent).
	keepStatusOnCreate bool
	// nameFn validates metadata.name (default: DNS-1123 subdomain).
	nameFn apivalidation.ValidateNameFunc

	defaults      func(obj runtime.Object)
	prepareCreate func(obj runtime.Object)
	// prepareCreateCtx sees the request (e.g. its user).
	prepareCreateCtx func(ctx context.Context, obj runtime.Object)
	prepareUpdate    func(obj, old runtime.Object)
	validate         func(obj runtime.Object) field.ErrorList
	validateUpdate   func(obj, old runtime.Object) field.ErrorList
	// prepareStatus runs after the generic spec/metadata reset of a status update.
	prepareStatus  func(obj, old runtime.Object)
	validateStatus func(obj, old runtime.Object) field.ErrorList
	// fields adds type-specific field-selector fields.
	fields func(obj runtime.Object, set fields.Set)
	// columns are the printed columns after Name; row returns the matching cells.
	columns []metav1.TableColumnDefinition
	row     func(obj runtime.Object) []interface{}
	// ownColumns: columns/row are the whole table (no leading Name column),
	// for events whose first upstream column is "Last Seen".
	ownColumns bool
	// allocator, when set, makes the resource's Strategy an Allocator too.
	allocator Allocator
}

// strategy is the generic Strategy driven by rules.
type strategy struct {
	r rules
}

var _ Strategy = (*strategy)(nil)

func newStrategy(r rules) *strategy {
	if r.nameFn == nil {
		r.nameFn = apivalidation.NameIsDNSSubdomain
	}
	if r.columns == nil {
		// The default table of kube-apiserver for types without a printer.
		r.columns = []metav1.TableColumnDefinition{{Name: "Created At", Type: "date",
			Description: metav1.ObjectMeta{}.SwaggerDoc()["creationTimestamp"]}}
		r.row = func(obj runtime.Object) []interface{} {
			return []interface{}{mustMeta(obj).GetCreationTimestamp().UTC().Format(time.RFC3339)}
		}
	}
	return &strategy{r: r}
}

func (s *strategy) Default(obj runtime.Object) {
	if s.r.defaults != nil {
		s.r.defaults(obj)
	}
}

func (s *strategy) PrepareForCreate(ctx context.Context, obj runtime.Object) {
	m := mustMeta(obj)
	if s.r.generation {
		m.SetGeneration(1)
	} else {
		m.SetGeneration(0)
	}
	if s.r.hasStatus && !s.r.keepStatusOnCreate {
		resetField(obj, "Status")
	}
	if s.r.prepareCreate != nil {
		s.r.prepareCreate(obj)
	}
	if s.r.prepareCreateCtx != nil {
		s.r.prepareCreateCtx(ctx, obj)
	}
}

func (s *strategy) Validate(_ context.Context, obj runtime.Object) field.ErrorList {
	m, err := meta.Accessor(obj)
	if err != nil {
		return field.ErrorList{field.InternalError(field.NewPath("metadata"), err)}
	}
	errs := apivalidation.ValidateObjectMetaAccessor(m, s.r.namespaced, s.r.nameFn, field.NewPath("metadata"))
	if s.r.validate != nil {
		errs = append(errs, s.r.validate(obj)...)
	}
	return errs
}

func (s *strategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	nm, om := mustMeta(obj), mustMeta(old)
	// Clients cannot set the generation (rest.BeforeUpdate).
	nm.SetGeneration(om.GetGeneration())
	if s.r.hasStatus {
		copyField(obj, old, "Status")
	}
	if s.r.generation && !fieldEqual(obj, old, "Spec") {
		nm.SetGeneration(om.GetGeneration() + 1)
	}
	if s.r.prepareUpdate != nil {
		s.r.prepareUpdate(obj, old)
	}
}

func (s *strategy) ValidateUpdate(ctx context.Context, obj, old runtime.Object) field.ErrorList {
	errs := s.validateMetaUpdate(obj, old)
	if s.r.validateUpdate != nil {
		return append(errs, s.r.validateUpdate(obj, old)...)
	}
	if s.r.validate != nil {
		errs = append(errs, s.r.validate(obj)...)
	}
	return errs
}

func (s *strategy) validateMetaUpdate(obj, old runtime.Object) field.ErrorList {
	nm, err1 := meta.Accessor(obj)
	om, err2 := meta.Accessor(old)
	if err1 != nil || err2 != nil {
		return field.ErrorList{field.InternalError(field.NewPath("metadata"), errFirst(err1, err2))}
	}
	p := field.NewPath("metadata")
	var errs field.ErrorList
	for _, e := range apivalidation.ValidateObjectMetaAccessorUpdate(nm, om, p) {
		// resourceVersion preconditions are the API layer's business: it
		// fills the stored version in for unconditional updates.
		if e.Field != "metadata.resourceVersion" {
			errs = append(errs, e)
		}
	}
	return append(errs, apivalidation.ValidateFinalizers(nm.GetFinalizers(), p.Child("finalizers"))...)
}

// PrepareForStatusUpdate keeps spec and the deletion timestamp from old, as
// most upstream status strategies do; rules.prepareStatus adds per-type rules
// (e.g. workloads also keep labels, pods keep owner references).
func (s *strategy) PrepareForStatusUpdate(_ context.Context, obj, old runtime.Object) {
	copyField(obj, old, "Spec")
	nm, om := mustMeta(obj), mustMeta(old)
	nm.SetDeletionTimestamp(om.GetDeletionTimestamp())
	nm.SetGeneration(om.GetGeneration())
	if s.r.prepareStatus != nil {
		s.r.prepareStatus(obj, old)
	}
}

func (s *strategy) ValidateStatusUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	errs := s.validateMetaUpdate(obj, old)
	if s.r.validateStatus != nil {
		errs = append(errs, s.r.validateStatus(obj, old)...)
	}
	return errs
}

func (s *strategy) Fields(obj runtime.Object) fields.Set {
	m := mustMeta(obj)
	set := fields.Set{"metadata.name": m.GetName()}
	if s.r.namespaced {
		set["metadata.namespace"] = m.GetNamespace()
	} else {
		set["metadata.namespace"] = ""
	}
	if s.r.fields != nil {
		s.r.fields(obj, set)
	}
	return set
}

func (s *strategy) TableColumns() []metav1.TableColumnDefinition {
	if s.r.ownColumns {
		return s.r.columns
	}
	cols := make([]metav1.TableColumnDefinition, 0, len(s.r.columns)+1)
	cols = append(cols, metav1.TableColumnDefinition{
		Name: "Name", Type: "string", Format: "name",
		Description: metav1.ObjectMeta{}.SwaggerDoc()["name"],
	})
	return append(cols, s.r.columns...)
}

func (s *strategy) TableRow(obj runtime.Object) []interface{} {
	if s.r.ownColumns {
		return s.r.row(obj)
	}
	cells := make([]interface{}, 0, len(s.r.columns)+1)
	cells = append(cells, mustMeta(obj).GetName())
	return append(cells, s.r.row(obj)...)
}

// mustMeta returns the metadata accessor of one of our typed objects.
func mustMeta(obj runtime.Object) metav1.Object {
	m, err := meta.Accessor(obj)
	if err != nil {
		panic(err) // every registered type embeds ObjectMeta
	}
	return m
}

func errFirst(errs ...error) error {
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}

// structField returns the addressable field name of the struct obj points to.
func structField(obj runtime.Object, name string) reflect.Value {
	v := reflect.ValueOf(obj)
	if v.Kind() != reflect.Pointer || v.IsNil() || v.Elem().Kind() != reflect.Struct {
		return reflect.Value{}
	}
	return v.Elem().FieldByName(name)
}

func resetField(obj runtime.Object, name string) {
	if f := structField(obj, name); f.IsValid() && f.CanSet() {
		f.Set(reflect.Zero(f.Type()))
	}
}

func copyField(dst, src runtime.Object, name string) {
	d, s := structField(dst, name), structField(src, name)
	if d.IsValid() && s.IsValid() && d.CanSet() && d.Type() == s.Type() {
		d.Set(s)
	}
}

func fieldEqual(a, b runtime.Object, name string) bool {
	x, y := structField(a, name), structField(b, name)
	if !x.IsValid() || !y.IsValid() {
		return true
	}
	return apiequality.Semantic.DeepEqual(x.Interface(), y.Interface())
}
