package crd

import (
	"encoding/json"
	"fmt"
	"sync"

	"go.uber.org/zap"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"k8s.io/kube-openapi/pkg/validation/spec"
	"sigs.k8s.io/structured-merge-diff/v6/typed"
)

// applyTypes is the server-side apply type converter of one version of c
// (s, its structural schema), as upstream's CRD handler builds it from the
// published OpenAPI models: lists declared x-kubernetes-list-type map or
// set merge by key or value, map-type atomic objects are replaced whole.
func applyTypes(c *apiextensionsv1.CustomResourceDefinition, v apiextensionsv1.CustomResourceDefinitionVersion,
	s *structuralschema.Structural) (managedfields.TypeConverter, error) {
	meta, err := metaSchemas()
	if err != nil {
		return nil, err
	}
	kinds, err := versionSchemas(c, v, s, "#/components/schemas/")
	if err != nil {
		return nil, err
	}
	models := make(map[string]*spec.Schema, len(meta)+len(kinds))
	for name, raw := range meta {
		if models[name], err = toSpecSchema(raw); err != nil {
			return nil, fmt.Errorf("schema %s: %w", name, err)
		}
	}
	for name, m := range kinds {
		raw, err := json.Marshal(m)
		if err != nil {
			return nil, err
		}
		if models[name], err = toSpecSchema(raw); err != nil {
			return nil, fmt.Errorf("schema %s: %w", name, err)
		}
	}
	return managedfields.NewTypeConverter(models, c.Spec.PreserveUnknownFields)
}

func toSpecSchema(raw []byte) (*spec.Schema, error) {
	var s spec.Schema
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, err
	}
	return &s, nil
}

// lazyApplyTypes builds a version's apply types on the first write of one
// of its objects (a chart installs many CRDs whose objects are never
// written); a schema they cannot be built from falls back to deduced
// types, with a warning.
type lazyApplyTypes struct {
	get func() managedfields.TypeConverter
}

func newLazyApplyTypes(c *apiextensionsv1.CustomResourceDefinition, v apiextensionsv1.CustomResourceDefinitionVersion,
	s *structuralschema.Structural, log *zap.Logger) *lazyApplyTypes {
	return &lazyApplyTypes{get: sync.OnceValue(func() managedfields.TypeConverter {
		tc, err := applyTypes(c, v, s)
		if err != nil {
			log.Warn("server-side apply of a custom resource uses deduced types", zap.String("crd", c.Name),
				zap.String("version", v.Name), zap.Error(err))
			return managedfields.NewDeducedTypeConverter()
		}
		return tc
	})}
}

// ObjectToTyped implements managedfields.TypeConverter.
func (l *lazyApplyTypes) ObjectToTyped(obj runtime.Object, opts ...typed.ValidationOptions) (*typed.TypedValue, error) {
	return l.get().ObjectToTyped(obj, opts...)
}

// TypedToObject implements managedfields.TypeConverter.
func (l *lazyApplyTypes) TypedToObject(v *typed.TypedValue) (runtime.Object, error) {
	return l.get().TypedToObject(v)
}
