package serviceip

import (
	"strings"

	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/api/validate/content"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	netutils "k8s.io/utils/net"

	"github.com/orch/orch/server/registry"
)

// Group is this package's resources for server/registry/all.
func Group() registry.Group {
	return registry.Group{Name: "serviceip", Resources: resources, AddToScheme: func(s *runtime.Scheme) error {
		utilruntime.Must(networkingv1.AddToScheme(s))
		return nil
	}}
}

func resources(registry.Config) []*registry.Resource {
	return registry.BuildAll(serviceCIDRs(), ipAddresses())
}

func cidrOf(o runtime.Object) *networkingv1.ServiceCIDR { return o.(*networkingv1.ServiceCIDR) }

func ipOf(o runtime.Object) *networkingv1.IPAddress { return o.(*networkingv1.IPAddress) }

func serviceCIDRs() registry.Def {
	return registry.Def{GroupVersion: networkingv1.SchemeGroupVersion, Resource: "servicecidrs", Kind: "ServiceCIDR", HasStatus: true,
		New: registry.NewObjects[networkingv1.ServiceCIDR](), NewList: registry.NewObjects[networkingv1.ServiceCIDRList](),
		Hooks: registry.Hooks{
			Validate: func(o runtime.Object) field.ErrorList { return validateCIDRs(cidrOf(o).Spec.CIDRs) },
			ValidateUpdate: func(o, old runtime.Object) field.ErrorList {
				return validateCIDRsUpdate(cidrOf(o).Spec.CIDRs, cidrOf(old).Spec.CIDRs)
			},
			PrepareStatus: registry.ResetMetaForStatus,
			Columns: []metav1.TableColumnDefinition{
				registry.Col("CIDRs", "string", 0, networkingv1.ServiceCIDRSpec{}.SwaggerDoc()["cidrs"]),
				registry.AgeColumn(),
			},
			Row: func(o runtime.Object) []interface{} {
				return []interface{}{strings.Join(cidrOf(o).Spec.CIDRs, ","), registry.Age(o)}
			},
		}}
}

// validateCIDRs: one or two valid CIDRs, at most one of each IP family.
func validateCIDRs(cidrs []string) field.ErrorList {
	p := field.NewPath("spec", "cidrs")
	switch {
	case len(cidrs) == 0:
		return field.ErrorList{field.Required(p, "at least one CIDR required")}
	case len(cidrs) > 2:
		return field.ErrorList{field.Invalid(p, cidrs, "may only hold up to 2 values")}
	}
	var errs field.ErrorList
	for i, c := range cidrs {
		errs = append(errs, utilvalidation.IsValidCIDR(p.Index(i), c)...)
	}
	if len(cidrs) == 2 {
		f := netutils.IPFamilyOfCIDRString(cidrs[0])
		if f == netutils.IPFamilyOfCIDRString(cidrs[1]) && f != netutils.IPFamilyUnknown {
			errs = append(errs, field.Invalid(p, cidrs, "may specify no more than one IP for each IP family, i.e 192.168.0.0/24 and 2001:db8::/64"))
		}
	}
	return errs
}

// validateCIDRsUpdate: the CIDRs do not change, except that a single-stack
// ServiceCIDR may gain the other family.
func validateCIDRsUpdate(cidrs, old []string) field.ErrorList {
	p := field.NewPath("spec", "cidrs")
	var errs field.ErrorList
	switch {
	case len(cidrs) == len(old):
		for i := range old {
			if cidrs[i] != old[i] {
				errs = append(errs, field.Invalid(p.Index(i), cidrs[i], apivalidation.FieldImmutableErrorMsg))
			}
		}
		// The old value was valid; an unchanged one needs no more checks.
		return errs
	case len(old) == 1 && len(cidrs) == 2:
		if cidrs[0] != old[0] {
			errs = append(errs, field.Invalid(p.Index(0), cidrs[0], apivalidation.FieldImmutableErrorMsg))
		}
		return append(errs, validateCIDRs(cidrs)...)
	}
	return field.ErrorList{field.Invalid(p, cidrs, apivalidation.FieldImmutableErrorMsg)}
}

func ipAddresses() registry.Def {
	return registry.Def{GroupVersion: networkingv1.SchemeGroupVersion, Resource: "ipaddresses", Kind: "IPAddress",
		ShortNames: []string{"ip"},
		New:        registry.NewObjects[networkingv1.IPAddress](), NewList: registry.NewObjects[networkingv1.IPAddressList](),
		Hooks: registry.Hooks{
			NameFn:   validateIPAddressName,
			Validate: func(o runtime.Object) field.ErrorList { return validateParentRef(ipOf(o).Spec.ParentRef) },
			ValidateUpdate: func(o, old runtime.Object) field.ErrorList {
				errs := validateParentRef(ipOf(o).Spec.ParentRef)
				return append(errs, apivalidation.ValidateImmutableField(ipOf(o).Spec.ParentRef, ipOf(old).Spec.ParentRef,
					field.NewPath("spec", "parentRef"))...)
			},
			Columns: []metav1.TableColumnDefinition{
				registry.Col("ParentRef", "string", 0, networkingv1.IPAddressSpec{}.SwaggerDoc()["parentRef"]),
			},
			Row: func(o runtime.Object) []interface{} { return []interface{}{parentRefString(ipOf(o).Spec.ParentRef)} },
		}}
}

// validateIPAddressName: the name is an IP address in canonical form.
func validateIPAddressName(name string, _ bool) []string {
	var out []string
	for _, e := range utilvalidation.IsValidIP(&field.Path{}, name) {
		out = append(out, e.Detail)
	}
	return out
}

// validateParentRef: a resource and a name that are path segments, an
// optional DNS-1123 group and path-segment namespace.
func validateParentRef(r *networkingv1.ParentReference) field.ErrorList {
	p := field.NewPath("spec", "parentRef")
	if r == nil {
		return field.ErrorList{field.Required(p, "")}
	}
	var errs field.ErrorList
	if r.Group != "" {
		for _, msg := range utilvalidation.IsDNS1123Subdomain(r.Group) {
			errs = append(errs, field.Invalid(p.Child("group"), r.Group, msg))
		}
	}
	for _, f := range []struct {
		name, v  string
		required bool
	}{{"resource", r.Resource, true}, {"name", r.Name, true}, {"namespace", r.Namespace, false}} {
		if f.v == "" {
			if f.required {
				errs = append(errs, field.Required(p.Child(f.name), ""))
			}
			continue
		}
		for _, msg := range content.IsPathSegmentName(f.v) {
			errs = append(errs, field.Invalid(p.Child(f.name), f.v, msg))
		}
	}
	return errs
}

// parentRefString is kubectl's PARENTREF: resource.group[/namespace]/name.
func parentRefString(r *networkingv1.ParentReference) string {
	if r == nil {
		return "<none>"
	}
	s := strings.ToLower(schema.GroupResource{Group: r.Group, Resource: r.Resource}.String())
	if r.Namespace != "" {
		s += "/" + r.Namespace
	}
	return s + "/" + r.Name
}
