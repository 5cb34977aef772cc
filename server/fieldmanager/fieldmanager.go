package fieldmanager

import (
	"fmt"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	"sigs.k8s.io/structured-merge-diff/v6/typed"

	"github.com/orch/orch/server/openapi"
)

// Defaulter applies a resource's defaults (its strategy's Default).
type Defaulter func(runtime.Object)

// Managers caches one FieldManager per kind and subresource.
type Managers struct {
	scheme *runtime.Scheme
	once   sync.Once
	typed  managedfields.TypeConverter
	err    error
	mu     sync.Mutex
	cache  map[key]entry
	// stripped are the fields no manager owns (TrackCreate).
	stripped *fieldpath.Set
	empty    map[schema.GroupVersionKind]*typed.TypedValue
}

type key struct {
	gvk         schema.GroupVersionKind
	subresource string
}

// entry is a cached FieldManager and the custom type converter it was
// built with (a CRD's new schema brings a new one).
type entry struct {
	fm    *managedfields.FieldManager
	types managedfields.TypeConverter
}

// New returns the cache over the API server's scheme.
func New(scheme *runtime.Scheme) *Managers {
	return &Managers{scheme: scheme, cache: map[key]entry{}, stripped: strippedFields(),
		empty: map[schema.GroupVersionKind]*typed.TypedValue{}}
}

// builtin is the type converter of the built-in types, from the embedded
// OpenAPI v2 definitions.
func (m *Managers) builtin() (managedfields.TypeConverter, error) {
	m.once.Do(func() {
		defs, err := openapi.New().V2Definitions()
		if err != nil {
			m.err = err
			return
		}
		m.typed, m.err = managedfields.NewTypeConverter(defs, false)
	})
	return m.typed, m.err
}

// For returns the FieldManager of gvk's subresource ("" or "status");
// custom marks unstructured custom resources, whose apply types come from
// their schema (types; nil: deduced, every list atomic).
func (m *Managers) For(gvk schema.GroupVersionKind, subresource string, custom bool, def Defaulter,
	types managedfields.TypeConverter) (*managedfields.FieldManager, error) {
	k := key{gvk, subresource}
	m.mu.Lock()
	defer m.mu.Unlock()
	if e, ok := m.cache[k]; ok && e.types == types {
		return e.fm, nil
	}
	var fm *managedfields.FieldManager
	var err error
	if custom {
		tc := types
		if tc == nil {
			tc = managedfields.NewDeducedTypeConverter()
		}
		fm, err = managedfields.NewDefaultCRDFieldManager(tc, unstructuredConverter{},
			defaulter(def), unstructuredCreater{}, gvk, gvk.GroupVersion(), subresource, nil)
	} else {
		var tc managedfields.TypeConverter
		if tc, err = m.builtin(); err != nil {
			return nil, err
		}
		fm, err = managedfields.NewDefaultFieldManager(tc, m.scheme, defaulter(def), m.scheme, gvk, gvk.GroupVersion(), subresource, nil)
	}
	if err != nil {
		return nil, fmt.Errorf("field manager for %s: %w", gvk, err)
	}
	m.cache[k] = entry{fm: fm, types: types}
	return fm, nil
}

type defaulter Defaulter

func (d defaulter) Default(obj runtime.Object) {
	if d != nil {
		d(obj)
	}
}

// unstructuredConverter converts custom resources between versions the
// None way: the same content with another apiVersion.
type unstructuredConverter struct{}

func (unstructuredConverter) Convert(in, out, _ interface{}) error {
	u, ok1 := in.(*unstructured.Unstructured)
	o, ok2 := out.(*unstructured.Unstructured)
	if !ok1 || !ok2 {
		return fmt.Errorf("cannot convert %T to %T", in, out)
	}
	o.Object = runtime.DeepCopyJSON(u.Object)
	return nil
}

func (unstructuredConverter) ConvertToVersion(in runtime.Object, gv runtime.GroupVersioner) (runtime.Object, error) {
	u, ok := in.(*unstructured.Unstructured)
	if !ok {
		return nil, fmt.Errorf("cannot convert %T", in)
	}
	out := u.DeepCopy()
	if target, ok := gv.KindForGroupVersionKinds([]schema.GroupVersionKind{u.GroupVersionKind()}); ok {
		out.SetGroupVersionKind(target)
	}
	return out, nil
}

func (unstructuredConverter) ConvertFieldLabel(_ schema.GroupVersionKind, label, value string) (string, string, error) {
	return label, value, nil
}

type unstructuredCreater struct{}

func (unstructuredCreater) New(gvk schema.GroupVersionKind) (runtime.Object, error) {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvk)
	return u, nil
}

// ManagerFromUserAgent is upstream's default manager name: the user agent
// up to its first "/", at most 128 characters.
func ManagerFromUserAgent(ua string) string {
	m, _, _ := strings.Cut(ua, "/")
	if len(m) > 128 {
		m = m[:128]
	}
	return m
}
