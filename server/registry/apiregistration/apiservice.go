package apiregistration

import (
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/orch/orch/server/registry"
)

// Group is apiregistration.k8s.io for server/registry/all.
func Group() registry.Group {
	return registry.Group{Name: GroupName, Resources: resources, AddToScheme: AddToScheme}
}

func resources(registry.Config) []*registry.Resource {
	d := registry.Def{
		GroupVersion: SchemeGroupVersion, Resource: "apiservices", Kind: "APIService",
		HasStatus: true,
		New:       registry.NewObjects[APIService](), NewList: registry.NewObjects[APIServiceList](),
		Hooks: registry.Hooks{
			NameFn:         validateName,
			Validate:       func(o runtime.Object) field.ErrorList { return Validate(o.(*APIService)) },
			ValidateUpdate: func(o, _ runtime.Object) field.ErrorList { return Validate(o.(*APIService)) },
			ValidateStatus: func(o, _ runtime.Object) field.ErrorList { return validateStatus(o.(*APIService)) },
			Columns: []metav1.TableColumnDefinition{
				registry.Col("Service", "string", 0, "The reference to the service that hosts this API endpoint."),
				registry.Col("Available", "string", 0, "Whether this service is available."),
				registry.AgeColumn(),
			},
			Row: func(o runtime.Object) []interface{} {
				a := o.(*APIService)
				return []interface{}{ServiceCell(a), AvailableCell(a), registry.Age(a)}
			},
		},
	}
	return []*registry.Resource{d.Build()}
}

// validateName accepts names made of path segments such as "v1." or
// "v1beta1.metrics.k8s.io"; that the name matches the spec is checked by Validate.
func validateName(name string, _ bool) []string {
	var errs []string
	for _, bad := range []string{"/", "%"} {
		if strings.Contains(name, bad) {
			errs = append(errs, fmt.Sprintf("may not contain '%s'", bad))
		}
	}
	if name == "." || name == ".." {
		errs = append(errs, fmt.Sprintf("may not be '%s'", name))
	}
	return errs
}

// Validate checks an APIService as kube-aggregator's ValidateAPIService does.
func Validate(a *APIService) field.ErrorList {
	var errs field.ErrorList
	spec := field.NewPath("spec")
	if want := a.Spec.Version + "." + a.Spec.Group; a.Name != want {
		errs = append(errs, field.Invalid(field.NewPath("metadata", "name"), a.Name,
			"must be `spec.version+\".\"+spec.group`"))
	}
	if len(a.Spec.Group) == 0 && a.Spec.Version != "v1" {
		errs = append(errs, field.Required(spec.Child("group"), "only v1 may have an empty group and it better be legacy kube"))
	}
	if len(a.Spec.Group) > 0 {
		for _, m := range utilvalidation.IsDNS1123Subdomain(a.Spec.Group) {
			errs = append(errs, field.Invalid(spec.Child("group"), a.Spec.Group, m))
		}
	}
	for _, m := range utilvalidation.IsDNS1035Label(a.Spec.Version) {
		errs = append(errs, field.Invalid(spec.Child("version"), a.Spec.Version, m))
	}
	if p := a.Spec.GroupPriorityMinimum; p <= 0 || p > 20000 {
		errs = append(errs, field.Invalid(spec.Child("groupPriorityMinimum"), p, "must be positive and less than 20000"))
	}
	if p := a.Spec.VersionPriority; p <= 0 || p > 1000 {
		errs = append(errs, field.Invalid(spec.Child("versionPriority"), p, "must be positive and less than 1000"))
	}
	return append(errs, validateService(a)...)
}

func validateService(a *APIService) field.ErrorList {
	var errs field.ErrorList
	spec := field.NewPath("spec")
	s := a.Spec.Service
	if s == nil {
		if len(a.Spec.CABundle) != 0 {
			errs = append(errs, field.Invalid(spec.Child("caBundle"), fmt.Sprintf("%d bytes", len(a.Spec.CABundle)), "local APIServices may not have a caBundle"))
		}
		if a.Spec.InsecureSkipTLSVerify {
			errs = append(errs, field.Invalid(spec.Child("insecureSkipTLSVerify"), true, "local APIServices may not have insecureSkipTLSVerify"))
		}
		return errs
	}
	svc := spec.Child("service")
	if len(s.Namespace) == 0 {
		errs = append(errs, field.Required(svc.Child("namespace"), ""))
	}
	if len(s.Name) == 0 {
		errs = append(errs, field.Required(svc.Child("name"), ""))
	}
	if s.Port != nil {
		for _, m := range utilvalidation.IsValidPortNum(int(*s.Port)) {
			errs = append(errs, field.Invalid(svc.Child("port"), *s.Port, m))
		}
	}
	if a.Spec.InsecureSkipTLSVerify && len(a.Spec.CABundle) > 0 {
		errs = append(errs, field.Invalid(spec.Child("insecureSkipTLSVerify"), true, "may not be true if caBundle is present"))
	}
	return errs
}

func validateStatus(a *APIService) field.ErrorList {
	var errs field.ErrorList
	p := field.NewPath("status", "conditions")
	for i, c := range a.Status.Conditions {
		switch c.Status {
		case ConditionTrue, ConditionFalse, ConditionUnknown:
		default:
			errs = append(errs, field.NotSupported(p.Index(i).Child("status"), c.Status,
				[]string{string(ConditionTrue), string(ConditionFalse), string(ConditionUnknown)}))
		}
	}
	return errs
}

// ServiceCell is the Service column: "Local" or "<namespace>/<name>".
func ServiceCell(a *APIService) string {
	if a.Spec.Service == nil {
		return "Local"
	}
	return a.Spec.Service.Namespace + "/" + a.Spec.Service.Name
}

// AvailableCell is the Available column as kubectl prints it upstream.
func AvailableCell(a *APIService) string {
	for _, c := range a.Status.Conditions {
		if c.Type != Available {
			continue
		}
		if c.Status == ConditionTrue {
			return string(c.Status)
		}
		return fmt.Sprintf("%s (%s)", c.Status, c.Reason)
	}
	return "Unknown"
}
