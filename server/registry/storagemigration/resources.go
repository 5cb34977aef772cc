package storagemigration

import (
	"strings"

	svmv1 "k8s.io/api/storagemigration/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/resourceversion"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/orch/orch/server/registry"
)

// Group is this package's resources for server/registry/all.
func Group() registry.Group {
	return registry.Group{Name: "storagemigration", Resources: resources, AddToScheme: func(s *runtime.Scheme) error {
		utilruntime.Must(svmv1.AddToScheme(s))
		return nil
	}}
}

func svmOf(o runtime.Object) *svmv1.StorageVersionMigration {
	return o.(*svmv1.StorageVersionMigration)
}

func resources(registry.Config) []*registry.Resource {
	return registry.BuildAll(registry.Def{GroupVersion: svmv1.SchemeGroupVersion, Resource: "storageversionmigrations",
		Kind: "StorageVersionMigration", HasStatus: true,
		New:     registry.NewObjects[svmv1.StorageVersionMigration](),
		NewList: registry.NewObjects[svmv1.StorageVersionMigrationList](),
		Hooks: registry.Hooks{
			Validate: func(o runtime.Object) field.ErrorList { return validateSpec(&svmOf(o).Spec) },
			ValidateUpdate: func(o, old runtime.Object) field.ErrorList {
				errs := validateSpec(&svmOf(o).Spec)
				if !apiequality.Semantic.DeepEqual(svmOf(o).Spec, svmOf(old).Spec) {
					errs = append(errs, field.Invalid(field.NewPath("spec"), svmOf(o).Spec, "field is immutable"))
				}
				return errs
			},
			PrepareStatus: registry.ResetMetaForStatus,
			ValidateStatus: func(o, old runtime.Object) field.ErrorList {
				return validateStatus(&svmOf(o).Status, &svmOf(old).Status)
			},
			Columns: []metav1.TableColumnDefinition{
				registry.Col("Resource", "string", 0, "GroupResource to migrate"),
				registry.Col("Status", "string", 0, "Status of the migration"),
			},
			Row: row,
		}})
}

// validateSpec: a DNS-1035 resource name and a DNS-1123 subdomain group.
func validateSpec(s *svmv1.StorageVersionMigrationSpec) field.ErrorList {
	var errs field.ErrorList
	rp := field.NewPath("spec", "resource", "resource")
	if s.Resource.Resource == "" {
		errs = append(errs, field.Required(rp, "resource is required to be set"))
	} else if msgs := utilvalidation.IsDNS1035Label(s.Resource.Resource); len(msgs) > 0 {
		errs = append(errs, field.Invalid(rp, s.Resource.Resource, strings.Join(msgs, ",")))
	}
	if g := s.Resource.Group; g != "" {
		if msgs := utilvalidation.IsDNS1123Subdomain(g); len(msgs) > 0 {
			errs = append(errs, field.Invalid(field.NewPath("spec", "resource", "group"), g, strings.Join(msgs, ",")))
		}
	}
	return errs
}

// validateStatus is upstream's ValidateStorageVersionMigrationStatusUpdate
// minus the metadata.
func validateStatus(st, old *svmv1.StorageVersionMigrationStatus) field.ErrorList {
	p := field.NewPath("status")
	var errs field.ErrorList
	if rv := st.ResourceVersion; rv != "" {
		if _, err := resourceversion.CompareResourceVersion(rv, rv); err != nil {
			errs = append(errs, field.Invalid(p.Child("resourceVersion"), rv, err.Error()))
		}
	}
	errs = append(errs, metav1validation.ValidateConditions(st.Conditions, p.Child("conditions"))...)
	if old.ResourceVersion != "" && old.ResourceVersion != st.ResourceVersion {
		errs = append(errs, field.Invalid(p.Child("resourceVersion"), st.ResourceVersion, "field is immutable"))
	}
	cp := p.Child("conditions")
	succeeded, failed := isTrue(st, svmv1.MigrationSucceeded), isTrue(st, svmv1.MigrationFailed)
	if succeeded && failed {
		errs = append(errs, field.Invalid(cp, st.Conditions, "Both success and failed conditions cannot be true at the same time"))
	}
	if isTrue(old, svmv1.MigrationSucceeded) && !succeeded {
		errs = append(errs, field.Invalid(cp, st.Conditions, "Success condition cannot be set to false once it is true"))
	}
	if isTrue(old, svmv1.MigrationFailed) && !failed {
		errs = append(errs, field.Invalid(cp, st.Conditions, "Failed condition cannot be set to false once it is true"))
	}
	return errs
}

func isTrue(st *svmv1.StorageVersionMigrationStatus, t svmv1.MigrationConditionType) bool {
	return meta.IsStatusConditionTrue(st.Conditions, string(t))
}

// row is kubectl's: the group/resource and the last of Running, Failed or
// Succeeded that is True (Unknown without one).
func row(o runtime.Object) []interface{} {
	s := svmOf(o)
	status := "Unknown"
	for _, c := range s.Status.Conditions {
		if c.Status != metav1.ConditionTrue {
			continue
		}
		switch svmv1.MigrationConditionType(c.Type) {
		case svmv1.MigrationRunning, svmv1.MigrationFailed, svmv1.MigrationSucceeded:
			status = c.Type
		}
	}
	return []interface{}{s.Spec.Resource.String(), status}
}
