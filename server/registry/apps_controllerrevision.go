package registry

import (
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// controllerRevisionDef is apps/v1 controllerrevisions: the template
// history of DaemonSets and StatefulSets (kubectl rollout history/undo).
func controllerRevisionDef() def {
	return def{gv: appsv1.SchemeGroupVersion, resource: "controllerrevisions", kind: "ControllerRevision", namespaced: true,
		newObj: objs[appsv1.ControllerRevision](), newList: objs[appsv1.ControllerRevisionList](), rules: controllerRevisionRules()}
}

// controllerRevisionRules follow upstream's ValidateControllerRevision(Update):
// data is required and immutable, revision is non-negative.
func controllerRevisionRules() rules {
	return rules{
		validate: func(obj runtime.Object) field.ErrorList {
			return validateControllerRevision(obj.(*appsv1.ControllerRevision))
		},
		validateUpdate: func(obj, old runtime.Object) field.ErrorList {
			n, o := obj.(*appsv1.ControllerRevision), old.(*appsv1.ControllerRevision)
			errs := validateControllerRevision(n)
			return append(errs, immutable(n.Data, o.Data, field.NewPath("data"))...)
		},
		columns: []metav1.TableColumnDefinition{
			col("Controller", "string", 0, "Controller of the object"),
			col("Revision", "integer", 0, appsv1.ControllerRevision{}.SwaggerDoc()["revision"]),
			ageColumn(),
		},
		row: func(obj runtime.Object) []interface{} {
			cr := obj.(*appsv1.ControllerRevision)
			return []interface{}{controllerOf(cr), cr.Revision, age(cr)}
		},
	}
}

func validateControllerRevision(cr *appsv1.ControllerRevision) field.ErrorList {
	var errs field.ErrorList
	if cr.Data.Raw == nil && cr.Data.Object == nil {
		errs = append(errs, field.Required(field.NewPath("data"), "data is mandatory"))
	}
	return append(errs, nonNegative(cr.Revision, field.NewPath("revision"))...)
}

// controllerOf prints the controller as kubectl does: "<kind>.<group>/<name>".
func controllerOf(cr *appsv1.ControllerRevision) string {
	ref := metav1.GetControllerOf(cr)
	if ref == nil {
		return "<none>"
	}
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	if err != nil || gv.Group == "" {
		return fmt.Sprintf("%s/%s", lower(ref.Kind), ref.Name)
	}
	return fmt.Sprintf("%s.%s/%s", lower(ref.Kind), gv.Group, ref.Name)
}
