package crd

import (
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apimachinery/pkg/runtime"
)

// Default sets the schema's defaults in x: a missing property (or a null
// one that may not be null) gets its default, then defaults apply inside
// objects, maps and lists, as upstream's structural defaulting does.
func Default(x interface{}, s *structuralschema.Structural) {
	if s == nil {
		return
	}
	switch v := x.(type) {
	case map[string]interface{}:
		defaultObject(v, s)
	case []interface{}:
		for i, item := range v {
			if s.Items != nil && nullNotAllowed(item, s.Items) && s.Items.Default.Object != nil {
				v[i] = runtime.DeepCopyJSONValue(s.Items.Default.Object)
			}
			Default(v[i], s.Items)
		}
	}
}

func defaultObject(m map[string]interface{}, s *structuralschema.Structural) {
	for k, prop := range s.Properties {
		if prop.Default.Object == nil {
			continue
		}
		if v, found := m[k]; !found || nullNotAllowed(v, &prop) {
			m[k] = runtime.DeepCopyJSONValue(prop.Default.Object)
		}
	}
	for k, v := range m {
		if prop, found := s.Properties[k]; found {
			Default(v, &prop)
			continue
		}
		if ap := s.AdditionalProperties; ap != nil && ap.Structural != nil {
			if nullNotAllowed(v, ap.Structural) && ap.Structural.Default.Object != nil {
				m[k] = runtime.DeepCopyJSONValue(ap.Structural.Default.Object)
			}
			Default(m[k], ap.Structural)
		}
	}
}

func nullNotAllowed(x interface{}, s *structuralschema.Structural) bool {
	return x == nil && s != nil && !s.Generic.Nullable
}
