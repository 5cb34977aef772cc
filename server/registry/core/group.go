package core

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/orch/orch/server/registry"
)

// Group is the core/v1 resources of this package, for server/registry/all.
func Group() registry.Group {
	return registry.Group{Name: "core/v1 (podtemplates, replicationcontrollers)", Resources: resources,
		AddToScheme: corev1.AddToScheme}
}

func resources(registry.Config) []*registry.Resource {
	return registry.BuildAll(podTemplateDef(), replicationControllerDef())
}
