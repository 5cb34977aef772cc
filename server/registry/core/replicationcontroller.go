package core

import (
	"maps"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	"github.com/orch/orch/server/registry"
)

func rc(o runtime.Object) *corev1.ReplicationController { return o.(*corev1.ReplicationController) }

// replicationControllerDef is pkg/registry/core/replicationcontroller.
func replicationControllerDef() registry.Def {
	return registry.Def{GroupVersion: corev1.SchemeGroupVersion, Resource: "replicationcontrollers",
		Kind: "ReplicationController", ShortNames: []string{"rc"}, Categories: []string{"all"},
		Namespaced: true, HasStatus: true, Scale: rcScale, OrphanDependents: true,
		New:     registry.NewObjects[corev1.ReplicationController](),
		NewList: registry.NewObjects[corev1.ReplicationControllerList](),
		Hooks: registry.Hooks{
			Generation: true,
			Defaults:   func(o runtime.Object) { DefaultReplicationController(rc(o)) },
			Validate:   func(o runtime.Object) field.ErrorList { return ValidateReplicationControllerSpec(&rc(o).Spec) },
			ValidateUpdate: func(o, _ runtime.Object) field.ErrorList {
				return ValidateReplicationControllerSpec(&rc(o).Spec)
			},
			ValidateStatus: func(o, _ runtime.Object) field.ErrorList {
				return ValidateReplicationControllerStatus(&rc(o).Status)
			},
			Fields: func(o runtime.Object, set fields.Set) {
				set["status.replicas"] = strconv.Itoa(int(rc(o).Status.Replicas))
			},
			Columns: []metav1.TableColumnDefinition{
				registry.Col("Desired", "integer", 0, corev1.ReplicationControllerSpec{}.SwaggerDoc()["replicas"]),
				registry.Col("Current", "integer", 0, corev1.ReplicationControllerStatus{}.SwaggerDoc()["replicas"]),
				registry.Col("Ready", "integer", 0, corev1.ReplicationControllerStatus{}.SwaggerDoc()["readyReplicas"]),
				registry.AgeColumn(),
				registry.Col("Containers", "string", 1, "Names of each container in the template."),
				registry.Col("Images", "string", 1, "Images referenced by each container in the template."),
				registry.Col("Selector", "string", 1, corev1.ReplicationControllerSpec{}.SwaggerDoc()["selector"]),
			},
			Row: rcRow,
		}}
}

func rcRow(o runtime.Object) []interface{} {
	r := rc(o)
	var cs []corev1.Container
	if r.Spec.Template != nil {
		cs = r.Spec.Template.Spec.Containers
	}
	names, images := registry.ContainerCells(cs)
	return []interface{}{int64(ptr.Deref(r.Spec.Replicas, 0)), int64(r.Status.Replicas), int64(r.Status.ReadyReplicas),
		registry.Age(o), names, images, labels.FormatLabels(r.Spec.Selector)}
}

// rcScale is the autoscaling/v1 Scale of a ReplicationController.
var rcScale = &registry.ScaleAccess{
	Get: func(o runtime.Object) (int32, int32, string) {
		r := rc(o)
		return ptr.Deref(r.Spec.Replicas, 0), r.Status.Replicas, labels.SelectorFromSet(r.Spec.Selector).String()
	},
	Set: func(o runtime.Object, n int32) { rc(o).Spec.Replicas = &n },
}

// DefaultReplicationController is SetDefaults_ReplicationController with
// the template's pod spec defaults: selector and labels default to the
// template's labels, replicas to 1.
func DefaultReplicationController(r *corev1.ReplicationController) {
	if t := r.Spec.Template; t != nil {
		registry.DefaultPodSpec(&t.Spec)
		if t.Labels != nil {
			if len(r.Spec.Selector) == 0 {
				r.Spec.Selector = maps.Clone(t.Labels)
			}
			if len(r.Labels) == 0 {
				r.Labels = maps.Clone(t.Labels)
			}
		}
	}
	if r.Spec.Replicas == nil {
		r.Spec.Replicas = ptr.To[int32](1)
	}
}

// ValidateReplicationControllerSpec is upstream's
// ValidateReplicationControllerSpec: a non-empty selector matching the
// template's labels, non-negative replicas and minReadySeconds, and a
// template whose pods restart Always and have no activeDeadlineSeconds.
func ValidateReplicationControllerSpec(s *corev1.ReplicationControllerSpec) field.ErrorList {
	p := field.NewPath("spec")
	errs := apivalidation.ValidateNonnegativeField(int64(s.MinReadySeconds), p.Child("minReadySeconds"))
	if labels.Set(s.Selector).AsSelector().Empty() {
		errs = append(errs, field.Required(p.Child("selector"), ""))
	}
	if s.Replicas == nil {
		errs = append(errs, field.Required(p.Child("replicas"), ""))
	} else {
		errs = append(errs, apivalidation.ValidateNonnegativeField(int64(*s.Replicas), p.Child("replicas"))...)
	}
	return append(errs, validateRCTemplate(s.Template, s.Selector, p.Child("template"))...)
}

// validateRCTemplate is ValidatePodTemplateSpecForRC.
func validateRCTemplate(t *corev1.PodTemplateSpec, selector map[string]string, p *field.Path) field.ErrorList {
	if t == nil {
		return field.ErrorList{field.Required(p, "")}
	}
	var errs field.ErrorList
	if sel := labels.Set(selector).AsSelector(); !sel.Empty() && !sel.Matches(labels.Set(t.Labels)) {
		errs = append(errs, field.Invalid(p.Child("metadata", "labels"), t.Labels, "`selector` does not match template `labels`"))
	}
	errs = append(errs, registry.ValidatePodTemplateSpec(t, p)...)
	if t.Spec.RestartPolicy != corev1.RestartPolicyAlways {
		errs = append(errs, field.NotSupported(p.Child("spec", "restartPolicy"), t.Spec.RestartPolicy,
			[]string{string(corev1.RestartPolicyAlways)}))
	}
	if t.Spec.ActiveDeadlineSeconds != nil {
		errs = append(errs, field.Forbidden(p.Child("spec", "activeDeadlineSeconds"),
			"activeDeadlineSeconds in ReplicationController is not Supported"))
	}
	return errs
}

// ValidateReplicationControllerStatus is upstream's: non-negative counts,
// none above status.replicas, available not above ready.
func ValidateReplicationControllerStatus(st *corev1.ReplicationControllerStatus) field.ErrorList {
	p := field.NewPath("status")
	var errs field.ErrorList
	for _, f := range []struct {
		name string
		v    int64
	}{{"replicas", int64(st.Replicas)}, {"fullyLabeledReplicas", int64(st.FullyLabeledReplicas)},
		{"readyReplicas", int64(st.ReadyReplicas)}, {"availableReplicas", int64(st.AvailableReplicas)},
		{"observedGeneration", st.ObservedGeneration}} {
		errs = append(errs, apivalidation.ValidateNonnegativeField(f.v, p.Child(f.name))...)
	}
	const msg = "cannot be greater than status.replicas"
	if st.FullyLabeledReplicas > st.Replicas {
		errs = append(errs, field.Invalid(p.Child("fullyLabeledReplicas"), st.FullyLabeledReplicas, msg))
	}
	if st.ReadyReplicas > st.Replicas {
		errs = append(errs, field.Invalid(p.Child("readyReplicas"), st.ReadyReplicas, msg))
	}
	if st.AvailableReplicas > st.Replicas {
		errs = append(errs, field.Invalid(p.Child("availableReplicas"), st.AvailableReplicas, msg))
	}
	if st.AvailableReplicas > st.ReadyReplicas {
		errs = append(errs, field.Invalid(p.Child("availableReplicas"), st.AvailableReplicas, "cannot be greater than readyReplicas"))
	}
	return errs
}
