package registry

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/orch/orch/datastore"
)

// Resource describes one REST resource the API server serves. The API server
// is generic over Resources; everything type-specific lives in the Strategy.
type Resource struct {
	GroupVersion schema.GroupVersion
	Resource     string // plural, e.g. "pods"
	Kind         string // e.g. "Pod"
	SingularName string
	ShortNames   []string
	Categories   []string // e.g. "all"
	Namespaced   bool
	// HasStatus serves the <resource>/status subresource: updates of the main
	// resource keep the stored status, status updates keep everything else.
	HasStatus bool
	// Scale, when set, serves <resource>/scale as autoscaling/v1 Scale.
	Scale *ScaleAccess
	// OrphanDependents: a delete without a propagation policy orphans the
	// dependents (kube-apiserver's DefaultGarbageCollectionPolicy of
	// batch/v1 Jobs and core/v1 ReplicationControllers); else Background.
	OrphanDependents bool
	// Subresources are further subresources served for get, update and
	// patch of the whole object (e.g. a CertificateSigningRequest's
	// approval): their strategy replaces the main resource's update rules.
	Subresources map[string]SubresourceStrategy

	// Verbs, when set, are the only verbs served (create-only review APIs
	// such as TokenReview); nil = every verb of a stored resource.
	Verbs []string

	// PruneUnknown is set on custom resources (unstructured objects): it
	// drops from a decoded body the fields the schema does not know and
	// returns their paths (for fieldValidation Strict and Warn).
	PruneUnknown func(obj map[string]interface{}) []string
	// Terminating, on custom resources, reports that the definition is being
	// deleted: creates are refused.
	Terminating func() bool
	// Conversion, on custom resources, is how stored objects become this
	// version and written ones the storage version (through the CRD's
	// webhook, or for the None strategy by setting apiVersion). nil:
	// objects are stored as written and read as this version.
	Conversion *Conversion
	// DefaultOnRead applies the strategy's defaults to objects read from
	// the store (custom resources: a default added to the schema shows on
	// objects stored before, as upstream's storage decoder does).
	DefaultOnRead bool
	// ApplyTypes, on custom resources, is the server-side apply type
	// converter built from the schema (list-type map/set, map-type atomic
	// merge as declared); nil: the deduced one (every list atomic).
	ApplyTypes managedfields.TypeConverter
	// StoredAs, on a built-in resource served in a version other than the
	// one its objects are stored in (autoscaling/v1 HorizontalPodAutoscalers
	// are kept as autoscaling/v2, events.k8s.io/v1 Events as core/v1 Events),
	// converts between the two. The storage-version resource owns the keys:
	// namespace cleanup skips this one.
	StoredAs *StoredAs

	New     func() runtime.Object // empty object of Kind
	NewList func() runtime.Object // empty list of Kind

	Strategy Strategy
}

// StoredAs converts a typed version to and from its storage version.
type StoredAs struct {
	// GroupVersion is the storage version; New an empty object of it.
	GroupVersion schema.GroupVersion
	New          func() runtime.Object
	// ToStorage and FromStorage convert whole objects (metadata included).
	ToStorage   func(runtime.Object) (runtime.Object, error)
	FromStorage func(runtime.Object) (runtime.Object, error)
}

// SubresourceStrategy is the update rules of one subresource.
type SubresourceStrategy interface {
	// PrepareForUpdate keeps of old everything the subresource may not change.
	PrepareForUpdate(ctx context.Context, obj, old runtime.Object)
	// ValidateUpdate checks the update.
	ValidateUpdate(ctx context.Context, obj, old runtime.Object) field.ErrorList
}

// Conversion converts objects between the versions of a resource.
type Conversion struct {
	// Storage is the version objects are stored in.
	Storage schema.GroupVersion
	// Convert turns objs, in place, into version to; objects already in it
	// are left alone (and cost no call).
	Convert func(ctx context.Context, objs []runtime.Object, to schema.GroupVersion) error
}

// ScaleAccess reads and writes the replica fields behind a scale subresource.
type ScaleAccess struct {
	// Get returns spec replicas, status replicas and the label selector string.
	Get func(obj runtime.Object) (specReplicas, statusReplicas int32, selector string)
	// Set writes spec replicas into obj.
	Set func(obj runtime.Object, replicas int32)
}

// Strategy holds the per-type rules kube-apiserver applies: defaults,
// validation, create/update preparation, field selectors and table printing.
// Objects passed in are private copies; strategies may mutate them.
type Strategy interface {
	// Default fills defaulted fields the way kube-apiserver's scheme defaulting does.
	Default(obj runtime.Object)
	// PrepareForCreate clears what a client may not set on create (e.g. status
	// for types with a status subresource) and sets generation to 1.
	PrepareForCreate(ctx context.Context, obj runtime.Object)
	// Validate checks a new object; errors carry field paths.
	Validate(ctx context.Context, obj runtime.Object) field.ErrorList
	// PrepareForUpdate copies over what an update of the main resource may not
	// change (status when HasStatus) and bumps generation when the spec changed.
	PrepareForUpdate(ctx context.Context, obj, old runtime.Object)
	// ValidateUpdate checks an update, including immutable fields.
	ValidateUpdate(ctx context.Context, obj, old runtime.Object) field.ErrorList
	// PrepareForStatusUpdate keeps everything but status (and metadata labels/annotations rules as upstream).
	PrepareForStatusUpdate(ctx context.Context, obj, old runtime.Object)
	// ValidateStatusUpdate checks a status update.
	ValidateStatusUpdate(ctx context.Context, obj, old runtime.Object) field.ErrorList
	// Fields returns the field-selector fields of obj (always includes
	// metadata.name and metadata.namespace).
	Fields(obj runtime.Object) fields.Set
	// TableColumns and TableRow implement server-side printing for kubectl get.
	// The first column is always "Name".
	TableColumns() []metav1.TableColumnDefinition
	TableRow(obj runtime.Object) []interface{}
}

// Allocator is implemented by strategies that reserve cluster-unique values
// (Service ClusterIPs and NodePorts). The returned ops are committed in the
// same datastore transaction as the object write, so a value is never handed
// out twice; on ErrKeyExists from an allocation op the API server retries.
type Allocator interface {
	AllocateOnCreate(ctx context.Context, store datastore.Store, obj runtime.Object) ([]datastore.Op, error)
	AllocateOnUpdate(ctx context.Context, store datastore.Store, obj, old runtime.Object) ([]datastore.Op, error)
	ReleaseOnDelete(obj runtime.Object) []datastore.Op
}

// Key returns the datastore key of an object: /registry/<group/>resource/<ns>/<name>.
// Core group resources have no group segment, like etcd's layout in kube-apiserver.
func (r *Resource) Key(namespace, name string) string {
	p := r.Prefix(namespace)
	return p + name
}

// Prefix returns the key prefix for a namespace ("" = all namespaces), ending in "/".
// A resource stored as another group's version (events.k8s.io Events are
// core Events) shares that group's keys.
func (r *Resource) Prefix(namespace string) string {
	p := "/registry/"
	g := r.GroupVersion.Group
	if r.StoredAs != nil {
		g = r.StoredAs.GroupVersion.Group
	}
	if g != "" {
		p += g + "/"
	}
	p += r.Resource + "/"
	if r.Namespaced && namespace != "" {
		p += namespace + "/"
	}
	return p
}
