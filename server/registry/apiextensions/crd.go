package apiextensions

import (
	"slices"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/orch/orch/server/registry"
)

// CleanupFinalizer holds a CRD until its custom resources are deleted.
const CleanupFinalizer = "customresourcecleanup.apiextensions.k8s.io"

// Group is apiextensions.k8s.io for server/registry/all.
func Group() registry.Group {
	return registry.Group{Name: apiextensionsv1.GroupName, Resources: resources, AddToScheme: apiextensionsv1.AddToScheme}
}

func resources(registry.Config) []*registry.Resource {
	crd := func(o runtime.Object) *apiextensionsv1.CustomResourceDefinition {
		return o.(*apiextensionsv1.CustomResourceDefinition)
	}
	d := registry.Def{
		GroupVersion: apiextensionsv1.SchemeGroupVersion, Resource: "customresourcedefinitions", Kind: "CustomResourceDefinition",
		ShortNames: []string{"crd", "crds"}, Categories: []string{"api-extensions"}, HasStatus: true,
		New:     registry.NewObjects[apiextensionsv1.CustomResourceDefinition](),
		NewList: registry.NewObjects[apiextensionsv1.CustomResourceDefinitionList](),
		Hooks: registry.Hooks{
			Generation: true,
			Defaults:   func(o runtime.Object) { Default(crd(o)) },
			PrepareCreate: func(o runtime.Object) {
				c := crd(o)
				if !slices.Contains(c.Finalizers, CleanupFinalizer) {
					c.Finalizers = append(c.Finalizers, CleanupFinalizer)
				}
				c.Status.StoredVersions = storageVersions(c)
			},
			// A new storage version joins storedVersions: objects may now
			// be stored in it too (a StorageVersionMigration prunes the list).
			PrepareUpdate: func(o, _ runtime.Object) {
				c := crd(o)
				for _, v := range storageVersions(c) {
					if !slices.Contains(c.Status.StoredVersions, v) {
						c.Status.StoredVersions = append(c.Status.StoredVersions, v)
					}
				}
			},
			Validate:       func(o runtime.Object) field.ErrorList { return Validate(crd(o)) },
			ValidateUpdate: func(o, old runtime.Object) field.ErrorList { return ValidateUpdate(crd(o), crd(old)) },
		},
	}
	r := d.Build()
	r.SingularName = "customresourcedefinition"
	return []*registry.Resource{r}
}

// Default applies upstream's v1 defaults.
func Default(c *apiextensionsv1.CustomResourceDefinition) {
	if c.Spec.Names.ListKind == "" && c.Spec.Names.Kind != "" {
		c.Spec.Names.ListKind = c.Spec.Names.Kind + "List"
	}
	if c.Spec.Conversion == nil {
		c.Spec.Conversion = &apiextensionsv1.CustomResourceConversion{Strategy: apiextensionsv1.NoneConverter}
	}
	if wh := c.Spec.Conversion.Webhook; wh != nil && wh.ClientConfig != nil && wh.ClientConfig.Service != nil && wh.ClientConfig.Service.Port == nil {
		port := int32(443)
		wh.ClientConfig.Service.Port = &port
	}
}

// storageVersions is the storage version's name, as a new CRD's storedVersions.
func storageVersions(c *apiextensionsv1.CustomResourceDefinition) []string {
	for _, v := range c.Spec.Versions {
		if v.Storage {
			return []string{v.Name}
		}
	}
	return nil
}
