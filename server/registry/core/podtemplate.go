package core

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/orch/orch/server/registry"
)

func podTemplate(o runtime.Object) *corev1.PodTemplate { return o.(*corev1.PodTemplate) }

// podTemplateDef is pkg/registry/core/podtemplate: no status, no
// generation, the template defaulted and validated on every write.
func podTemplateDef() registry.Def {
	return registry.Def{GroupVersion: corev1.SchemeGroupVersion, Resource: "podtemplates", Kind: "PodTemplate",
		Namespaced: true,
		New:        registry.NewObjects[corev1.PodTemplate](),
		NewList:    registry.NewObjects[corev1.PodTemplateList](),
		Hooks: registry.Hooks{
			Defaults: func(o runtime.Object) { registry.DefaultPodSpec(&podTemplate(o).Template.Spec) },
			Validate: func(o runtime.Object) field.ErrorList { return validatePodTemplate(podTemplate(o)) },
			ValidateUpdate: func(o, _ runtime.Object) field.ErrorList {
				return validatePodTemplate(podTemplate(o))
			},
			Columns: []metav1.TableColumnDefinition{
				registry.Col("Containers", "string", 0, "Names of each container in the template."),
				registry.Col("Images", "string", 0, "Images referenced by each container in the template."),
				registry.Col("Pod Labels", "string", 0, "The labels for the pod template."),
			},
			Row: func(o runtime.Object) []interface{} {
				t := podTemplate(o)
				names, images := registry.ContainerCells(t.Template.Spec.Containers)
				return []interface{}{names, images, labels.FormatLabels(t.Template.Labels)}
			},
		}}
}

// validatePodTemplate is ValidatePodTemplate without the metadata (the
// generic strategy checks it).
func validatePodTemplate(t *corev1.PodTemplate) field.ErrorList {
	return registry.ValidatePodTemplateSpec(&t.Template, field.NewPath("template"))
}
