package crd

import (
	"fmt"
	"strings"

	"go.uber.org/zap"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/orch/orch/server/registry"
	"github.com/orch/orch/server/webhookclient"
)

// Resources builds the served versions of an Established CRD, named by its
// accepted names. terminating reports the CRD's deletion; hooks calls its
// conversion webhook, if it has one. A schema server-side apply cannot type
// is applied with deduced types (every list atomic), with a warning.
func Resources(c *apiextensionsv1.CustomResourceDefinition, terminating func() bool, hooks *webhookclient.Client,
	log *zap.Logger) ([]*registry.Resource, error) {
	names := c.Status.AcceptedNames
	conv, err := conversionOf(c, hooks)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", c.Name, err)
	}
	var out []*registry.Resource
	for _, v := range c.Spec.Versions {
		if !v.Served {
			continue
		}
		r, err := versionResource(c, names, v, log)
		if err != nil {
			return nil, fmt.Errorf("%s version %s: %w", c.Name, v.Name, err)
		}
		r.Terminating, r.Conversion = terminating, conv
		out = append(out, r)
	}
	return out, nil
}

func versionResource(c *apiextensionsv1.CustomResourceDefinition, names apiextensionsv1.CustomResourceDefinitionNames,
	v apiextensionsv1.CustomResourceDefinitionVersion, log *zap.Logger) (*registry.Resource, error) {
	if v.Schema == nil || v.Schema.OpenAPIV3Schema == nil {
		return nil, fmt.Errorf("no schema")
	}
	sch, err := NewSchema(v.Schema.OpenAPIV3Schema)
	if err != nil {
		return nil, err
	}
	tbl, err := newTable(v.AdditionalPrinterColumns)
	if err != nil {
		return nil, err
	}
	gv := schema.GroupVersion{Group: c.Spec.Group, Version: v.Name}
	hasStatus := v.Subresources != nil && v.Subresources.Status != nil
	singular := names.Singular
	if singular == "" {
		singular = strings.ToLower(names.Kind)
	}
	r := &registry.Resource{
		GroupVersion: gv, Resource: names.Plural, Kind: names.Kind, SingularName: singular,
		ShortNames: names.ShortNames, Categories: names.Categories,
		Namespaced: c.Spec.Scope == apiextensionsv1.NamespaceScoped, HasStatus: hasStatus,
		New:           func() runtime.Object { return &unstructured.Unstructured{} },
		NewList:       func() runtime.Object { return &unstructured.UnstructuredList{} },
		PruneUnknown:  sch.Prune,
		DefaultOnRead: true,
		ApplyTypes:    newLazyApplyTypes(c, v, sch.Structural, log),
		Strategy: &strategy{namespaced: c.Spec.Scope == apiextensionsv1.NamespaceScoped, hasStatus: hasStatus,
			schema: sch, table: tbl, selectable: newSelectable(v.SelectableFields)},
	}
	if v.Subresources != nil && v.Subresources.Scale != nil {
		r.Scale = scaleAccess(v.Subresources.Scale)
	}
	return r, nil
}

// scaleAccess reads and writes the replica paths of a scale subresource.
func scaleAccess(s *apiextensionsv1.CustomResourceSubresourceScale) *registry.ScaleAccess {
	path := func(p string) []string { return strings.Split(strings.TrimPrefix(p, "."), ".") }
	spec, status := path(s.SpecReplicasPath), path(s.StatusReplicasPath)
	var sel []string
	if s.LabelSelectorPath != nil {
		sel = path(*s.LabelSelectorPath)
	}
	return &registry.ScaleAccess{
		Get: func(obj runtime.Object) (int32, int32, string) {
			m := content(obj)
			specR, _, _ := unstructured.NestedInt64(m, spec...)
			statusR, _, _ := unstructured.NestedInt64(m, status...)
			var selector string
			if sel != nil {
				selector, _, _ = unstructured.NestedString(m, sel...)
			}
			return int32(specR), int32(statusR), selector
		},
		Set: func(obj runtime.Object, replicas int32) {
			_ = unstructured.SetNestedField(content(obj), int64(replicas), spec...)
		},
	}
}
