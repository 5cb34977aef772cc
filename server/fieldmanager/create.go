package fieldmanager

import (
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	"sigs.k8s.io/structured-merge-diff/v6/typed"
)

// emptyTyped is the typed value of an empty object of gvk: what a create
// is compared with, as upstream compares with the new, empty live object.
func (m *Managers) emptyTyped(tc managedfields.TypeConverter, gvk schema.GroupVersionKind) (*typed.TypedValue, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if tv := m.empty[gvk]; tv != nil {
		return tv, nil
	}
	obj, err := m.scheme.New(gvk)
	if err != nil {
		return nil, err
	}
	obj.GetObjectKind().SetGroupVersionKind(gvk)
	tv, err := tc.ObjectToTyped(obj, typed.AllowDuplicates)
	if err != nil {
		return nil, err
	}
	m.empty[gvk] = tv
	return tv, nil
}

// strippedFields are the fields no manager owns (upstream's stripMetaManager).
func strippedFields() *fieldpath.Set {
	p := fieldpath.MakePathOrDie
	return fieldpath.NewSet(p("apiVersion"), p("kind"), p("metadata"), p("metadata", "name"), p("metadata", "namespace"),
		p("metadata", "creationTimestamp"), p("metadata", "selfLink"), p("metadata", "uid"), p("metadata", "clusterName"),
		p("metadata", "generation"), p("metadata", "managedFields"), p("metadata", "resourceVersion"))
}

// TrackCreate sets the managedFields of obj, a built-in object being
// created by manager, to what upstream's field manager computes for that
// Update from an empty object — one entry owning every field set except
// the stripped ones, or none — in one walk of the object instead of the
// general compare and merge (a create's hot path). It reports false and
// leaves obj alone when it cannot: a body with managedFields of its own,
// or an object its schema does not accept; For(...).UpdateNoErrors then
// does the general work.
func (m *Managers) TrackCreate(obj runtime.Object, manager string, now time.Time) bool {
	acc, err := meta.Accessor(obj)
	if err != nil || len(acc.GetManagedFields()) > 0 {
		return false
	}
	tc, err := m.builtin()
	if err != nil {
		return false
	}
	tv, err := tc.ObjectToTyped(obj, typed.AllowDuplicates)
	if err != nil {
		return false
	}
	empty, err := m.emptyTyped(tc, obj.GetObjectKind().GroupVersionKind())
	if err != nil {
		return false
	}
	cmp, err := empty.Compare(tv)
	if err != nil {
		return false
	}
	set := cmp.Added.Union(cmp.Modified).Difference(m.stripped)
	if set.Empty() {
		acc.SetManagedFields(nil)
		return true
	}
	raw, err := set.ToJSON()
	if err != nil {
		return false
	}
	t := metav1.NewTime(now.UTC())
	acc.SetManagedFields([]metav1.ManagedFieldsEntry{{Manager: manager, Operation: metav1.ManagedFieldsOperationUpdate,
		APIVersion: obj.GetObjectKind().GroupVersionKind().GroupVersion().String(), Time: &t,
		FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: raw}}})
	return true
}
