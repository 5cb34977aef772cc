package resource

import (
	"fmt"
	"strings"

	resourcev1 "k8s.io/api/resource/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/sets"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// immutable is upstream's ValidateImmutableField.
func immutable(v, old any, path string) field.ErrorList {
	if apiequality.Semantic.DeepEqual(v, old) {
		return nil
	}
	return field.ErrorList{field.Invalid(field.NewPath(path), v, "field is immutable")}
}

// validateDriverName is upstream's ValidateCSIDriverName, which DRA
// driver names share.
func validateDriverName(name string, p *field.Path) field.ErrorList {
	switch {
	case name == "":
		return field.ErrorList{field.Required(p, "")}
	case len(name) > resourcev1.DriverNameMaxLength:
		return field.ErrorList{field.TooLong(p, name, resourcev1.DriverNameMaxLength)}
	}
	return invalid(p, name, utilvalidation.IsDNS1123Subdomain(strings.ToLower(name)))
}

func invalid(p *field.Path, v string, msgs []string) field.ErrorList {
	var errs field.ErrorList
	for _, msg := range msgs {
		errs = append(errs, field.Invalid(p, v, msg))
	}
	return errs
}

func validateDNSLabel(name string, p *field.Path) field.ErrorList {
	if name == "" {
		return field.ErrorList{field.Required(p, "")}
	}
	return invalid(p, name, utilvalidation.IsDNS1123Label(name))
}

func validateSubdomain(name string, p *field.Path) field.ErrorList {
	if name == "" {
		return field.ErrorList{field.Required(p, "")}
	}
	return invalid(p, name, utilvalidation.IsDNS1123Subdomain(name))
}

// validatePoolName: a required, '/'-separated list of DNS subdomains.
func validatePoolName(name string, p *field.Path) field.ErrorList {
	if name == "" {
		return field.ErrorList{field.Required(p, "")}
	}
	var errs field.ErrorList
	if len(name) > resourcev1.PoolNameMaxLength {
		errs = append(errs, field.TooLong(p, "", resourcev1.PoolNameMaxLength))
	}
	for _, part := range strings.Split(name, "/") {
		errs = append(errs, invalid(p, part, utilvalidation.IsDNS1123Subdomain(part))...)
	}
	return errs
}

// tooMany reports a list over max items (max < 0: unbounded).
func tooMany(n, max int, p *field.Path) field.ErrorList {
	if max >= 0 && n > max {
		return field.ErrorList{field.TooMany(p, n, max)}
	}
	return nil
}

// validateSelectors: at most 32, each with a CEL expression of at most
// 10 KiB (not compiled: see the package documentation).
func validateSelectors(sels []resourcev1.DeviceSelector, p *field.Path) field.ErrorList {
	errs := tooMany(len(sels), resourcev1.DeviceSelectorsMaxSize, p)
	for i, s := range sels {
		sp := p.Index(i)
		switch {
		case s.CEL == nil:
			errs = append(errs, field.Required(sp.Child("cel"), ""))
		case strings.TrimSpace(s.CEL.Expression) == "":
			errs = append(errs, field.Required(sp.Child("cel", "expression"), ""))
		case len(s.CEL.Expression) > resourcev1.CELSelectorExpressionMaxLength:
			errs = append(errs, field.TooLong(sp.Child("cel", "expression"), "", resourcev1.CELSelectorExpressionMaxLength))
		}
	}
	return errs
}

// validateConfiguration: an opaque configuration with a driver and
// parameters of at most 10 KiB.
func validateConfiguration(c resourcev1.DeviceConfiguration, p *field.Path) field.ErrorList {
	if c.Opaque == nil {
		return field.ErrorList{field.Required(p.Child("opaque"), "")}
	}
	op := p.Child("opaque")
	errs := validateDriverName(c.Opaque.Driver, op.Child("driver"))
	raw := c.Opaque.Parameters.Raw
	switch {
	case len(raw) == 0:
		errs = append(errs, field.Required(op.Child("parameters"), ""))
	case len(raw) > resourcev1.OpaqueParametersMaxLength:
		errs = append(errs, field.TooLong(op.Child("parameters"), "", resourcev1.OpaqueParametersMaxLength))
	}
	return errs
}

var taintEffects = sets.New(resourcev1.DeviceTaintEffectNoSchedule, resourcev1.DeviceTaintEffectNoExecute, resourcev1.DeviceTaintEffectNone)

func validateTaint(t, old *resourcev1.DeviceTaint, p *field.Path) field.ErrorList {
	errs := metav1validation.ValidateLabelName(t.Key, p.Child("key"))
	if t.Value != "" {
		errs = append(errs, invalid(p.Child("value"), t.Value, utilvalidation.IsValidLabelValue(t.Value))...)
	}
	if old == nil || old.Effect != t.Effect {
		switch {
		case t.Effect == "":
			errs = append(errs, field.Required(p.Child("effect"), ""))
		case !taintEffects.Has(t.Effect):
			errs = append(errs, field.NotSupported(p.Child("effect"), t.Effect, sets.List(taintEffects)))
		}
	}
	return errs
}

func validateToleration(t resourcev1.DeviceToleration, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if t.Key != "" {
		errs = append(errs, metav1validation.ValidateLabelName(t.Key, p.Child("key"))...)
	}
	switch t.Operator {
	case resourcev1.DeviceTolerationOpExists:
		if t.Value != "" {
			errs = append(errs, field.Invalid(p.Child("value"), t.Value, "must be empty for operator `Exists`"))
		}
	case resourcev1.DeviceTolerationOpEqual:
		errs = append(errs, invalid(p.Child("value"), t.Value, utilvalidation.IsValidLabelValue(t.Value))...)
	case "":
		errs = append(errs, field.Required(p.Child("operator"), ""))
	default:
		errs = append(errs, field.NotSupported(p.Child("operator"), t.Operator, []resourcev1.DeviceTolerationOperator{resourcev1.DeviceTolerationOpEqual, resourcev1.DeviceTolerationOpExists}))
	}
	if t.Effect != "" && !taintEffects.Has(t.Effect) {
		errs = append(errs, field.NotSupported(p.Child("effect"), t.Effect, sets.List(taintEffects)))
	}
	return errs
}

// validateUnique reports names used twice in a list at p.
func validateUnique(names []string, p *field.Path, child string) field.ErrorList {
	var errs field.ErrorList
	seen := sets.New[string]()
	for i, n := range names {
		if seen.Has(n) {
			ip := p.Index(i)
			if child != "" {
				ip = ip.Child(child)
			}
			errs = append(errs, field.Duplicate(ip, n))
		}
		seen.Insert(n)
	}
	return errs
}

func validateDeviceClassSpec(s *resourcev1.DeviceClassSpec) field.ErrorList {
	p := field.NewPath("spec")
	errs := validateSelectors(s.Selectors, p.Child("selectors"))
	errs = append(errs, tooMany(len(s.Config), resourcev1.DeviceConfigMaxSize, p.Child("config"))...)
	for i, c := range s.Config {
		errs = append(errs, validateConfiguration(c.DeviceConfiguration, p.Child("config").Index(i))...)
	}
	if n := s.ExtendedResourceName; n != nil && !isExtendedResourceName(*n) {
		errs = append(errs, field.Invalid(p.Child("extendedResourceName"), *n, "must be a valid extended resource name"))
	}
	return errs
}

// isExtendedResourceName: a qualified name outside kubernetes.io that is
// also a valid "requests."-prefixed quota name.
func isExtendedResourceName(name string) bool {
	if !strings.Contains(name, "/") || strings.Contains(name, "kubernetes.io/") || strings.HasPrefix(name, "requests.") {
		return false
	}
	return len(utilvalidation.IsQualifiedName("requests."+name)) == 0
}

func validateTaintRuleSpec(s, old *resourcev1.DeviceTaintRuleSpec) field.ErrorList {
	p := field.NewPath("spec")
	var errs field.ErrorList
	if sel := s.DeviceSelector; sel != nil {
		sp := p.Child("deviceSelector")
		if sel.Driver != nil {
			errs = append(errs, validateDriverName(*sel.Driver, sp.Child("driver"))...)
		}
		if sel.Pool != nil {
			errs = append(errs, validatePoolName(*sel.Pool, sp.Child("pool"))...)
		}
		if sel.Device != nil {
			errs = append(errs, validateDNSLabel(*sel.Device, sp.Child("device"))...)
		}
	}
	var oldTaint *resourcev1.DeviceTaint
	if old != nil {
		oldTaint = &old.Taint
	}
	return append(errs, validateTaint(&s.Taint, oldTaint, p.Child("taint"))...)
}

func validateTaintRuleStatus(st *resourcev1.DeviceTaintRuleStatus) field.ErrorList {
	cp := field.NewPath("status", "conditions")
	errs := metav1validation.ValidateConditions(st.Conditions, cp)
	return append(errs, tooMany(len(st.Conditions), resourcev1.DeviceTaintRuleStatusMaxConditions, cp)...)
}

// requestNotFound is upstream's message for a reference to no request.
const requestNotFound = "must be the name of a request in the claim or the name of a request and a subrequest separated by '/'"

func validateRequestRefs(refs []string, names sets.Set[string], p *field.Path) field.ErrorList {
	errs := tooMany(len(refs), resourcev1.DeviceRequestsMaxSize, p)
	for i, r := range refs {
		if !names.Has(r) {
			errs = append(errs, field.Invalid(p.Index(i), r, requestNotFound))
		}
	}
	return append(errs, validateUnique(refs, p, "")...)
}

func validateTemplateSpec(s *resourcev1.ResourceClaimTemplateSpec) field.ErrorList {
	p := field.NewPath("spec")
	mp := p.Child("metadata")
	errs := apivalidation.ValidateAnnotations(s.Annotations, mp.Child("annotations"))
	errs = append(errs, metav1validation.ValidateLabels(s.Labels, mp.Child("labels"))...)
	return append(errs, validateClaimSpec(&s.Spec, p.Child("spec"))...)
}

func fmtFields(fs []string) string { return fmt.Sprintf("{%s}", strings.Join(fs, ", ")) }
