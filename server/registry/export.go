package registry

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Def describes one resource of a per-group package (server/registry/<group>):
// Build gives it the generic Strategy driven by its Hooks, the same one the
// legacy groups of this package use.
type Def struct {
	GroupVersion schema.GroupVersion
	Resource     string
	Kind         string
	ShortNames   []string
	Categories   []string
	Namespaced   bool
	HasStatus    bool
	Scale        *ScaleAccess
	// OrphanDependents: deletes without a propagation policy orphan (see Resource).
	OrphanDependents bool
	New              func() runtime.Object
	NewList          func() runtime.Object
	Hooks            Hooks
	// Subresources are extra update subresources (see Resource).
	Subresources map[string]SubresourceStrategy
	// StoredAs: see Resource.
	StoredAs *StoredAs
}

// Hooks are the type-specific rules of a Def; every nil hook falls back to
// the generic behaviour (metadata validation, Name + "Created At" printing,
// metadata field selectors).
type Hooks struct {
	// Generation: create sets metadata.generation to 1, updates bump it when spec changes.
	Generation bool
	// KeepStatusOnCreate: a create may set status.
	KeepStatusOnCreate bool
	// NameFn validates metadata.name (default: DNS-1123 subdomain).
	NameFn apivalidation.ValidateNameFunc

	Defaults      func(obj runtime.Object)
	PrepareCreate func(obj runtime.Object)
	// PrepareCreateCtx runs after PrepareCreate with the request context
	// (the requesting user: auth.UserFrom).
	PrepareCreateCtx func(ctx context.Context, obj runtime.Object)
	PrepareUpdate    func(obj, old runtime.Object)
	Validate         func(obj runtime.Object) field.ErrorList
	ValidateUpdate   func(obj, old runtime.Object) field.ErrorList
	PrepareStatus    func(obj, old runtime.Object)
	ValidateStatus   func(obj, old runtime.Object) field.ErrorList
	// Fields adds type-specific field-selector fields.
	Fields func(obj runtime.Object, set fields.Set)
	// Columns are printed after Name; Row returns the matching cells.
	Columns []metav1.TableColumnDefinition
	Row     func(obj runtime.Object) []interface{}
	// Allocator, when set, makes the Strategy an Allocator too.
	Allocator Allocator
}

// Build returns the Resource of d.
func (d Def) Build() *Resource {
	h := d.Hooks
	r := def{
		gv: d.GroupVersion, resource: d.Resource, kind: d.Kind, short: d.ShortNames,
		namespaced: d.Namespaced, hasStatus: d.HasStatus, scale: d.Scale, orphan: d.OrphanDependents,
		newObj: d.New, newList: d.NewList,
		rules: rules{
			generation: h.Generation, keepStatusOnCreate: h.KeepStatusOnCreate, nameFn: h.NameFn,
			defaults: h.Defaults, prepareCreate: h.PrepareCreate, prepareCreateCtx: h.PrepareCreateCtx, prepareUpdate: h.PrepareUpdate,
			validate: h.Validate, validateUpdate: h.ValidateUpdate,
			prepareStatus: h.PrepareStatus, validateStatus: h.ValidateStatus,
			fields: h.Fields, columns: h.Columns, row: h.Row, allocator: h.Allocator,
		},
	}.build()
	r.Categories = d.Categories
	r.Subresources = d.Subresources
	r.StoredAs = d.StoredAs
	return r
}

// BuildAll returns the Resources of defs, in order.
func BuildAll(defs ...Def) []*Resource {
	out := make([]*Resource, 0, len(defs))
	for _, d := range defs {
		out = append(out, d.Build())
	}
	return out
}

// NewObjects returns the New/NewList constructors of a typed object.
func NewObjects[T any, PT interface {
	*T
	runtime.Object
}]() func() runtime.Object {
	return objs[T, PT]()
}

// Col builds a table column; priority 1 marks wide-only (-o wide) columns.
func Col(name, typ string, priority int32, desc string) metav1.TableColumnDefinition {
	return col(name, typ, priority, desc)
}

// AgeColumn is the usual Age column; Age returns its cell.
func AgeColumn() metav1.TableColumnDefinition { return ageColumn() }

// Age is the Age cell of obj.
func Age(obj runtime.Object) string { return age(obj) }

// Since is kubectl's cell for a timestamp other than creation (how long
// ago t was, "<unknown>" when zero).
func Since(t metav1.Time) string { return translateTimestampSince(t) }

// Group is one API group's contribution to the served API: its resources
// and the scheme registration of its types (see server/registry/all).
type Group struct {
	Name        string
	Resources   func(Config) []*Resource
	AddToScheme func(*runtime.Scheme) error
}

// Legacy is the group set still defined in this package (core, apps, batch,
// coordination, discovery, events, networking, policy, scheduling, storage).
func Legacy() Group {
	return Group{Name: "legacy", Resources: All, AddToScheme: addLegacyToScheme}
}

// ResetMetaForStatus is a Hooks.PrepareStatus for types whose status
// subresource changes nothing of the metadata (upstream's
// metav1.ResetObjectMetaForStatus: labels, annotations, finalizers, owner
// references, deletion timestamp and generation stay as stored).
func ResetMetaForStatus(obj, old runtime.Object) {
	metav1.ResetObjectMetaForStatus(mustMeta(obj), mustMeta(old))
}

// DefaultPodSpec applies the defaults upstream gives the pod spec of a pod
// template (SetDefaults_PodSpec and everything a PodSpec contains), the
// ones orch applies to the templates of Deployments and the other workloads.
func DefaultPodSpec(spec *corev1.PodSpec) { defaultPodSpec(spec) }

// ValidatePodTemplateSpec is upstream's ValidatePodTemplateSpec: the
// template's labels and annotations, its pod spec (orch's pod validation)
// and no ephemeral containers. p is the path of the template.
func ValidatePodTemplateSpec(t *corev1.PodTemplateSpec, p *field.Path) field.ErrorList {
	return validatePodTemplate(t, p)
}

// ContainerCells are kubectl's Containers and Images cells: the names and
// the images of cs, comma-joined.
func ContainerCells(cs []corev1.Container) (names, images string) { return containerCells(cs) }

// ValidateNodeSelector is upstream's ValidateNodeSelector: at least one
// term, each with valid requirements and field requirements.
func ValidateNodeSelector(ns *corev1.NodeSelector, p *field.Path) field.ErrorList {
	tp := p.Child("nodeSelectorTerms")
	if len(ns.NodeSelectorTerms) == 0 {
		return field.ErrorList{field.Required(tp, "must have at least one node selector term")}
	}
	var errs field.ErrorList
	for i, term := range ns.NodeSelectorTerms {
		errs = append(errs, validateNodeSelectorTerm(term, tp.Index(i))...)
	}
	return errs
}
