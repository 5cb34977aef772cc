package admissionregistration

import (
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/sets"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	"github.com/orch/orch/server/admission/celcond"
	"github.com/orch/orch/server/registry"
)

func policyOf(o runtime.Object) *admissionregistrationv1.ValidatingAdmissionPolicy {
	return o.(*admissionregistrationv1.ValidatingAdmissionPolicy)
}

func bindingOf(o runtime.Object) *admissionregistrationv1.ValidatingAdmissionPolicyBinding {
	return o.(*admissionregistrationv1.ValidatingAdmissionPolicyBinding)
}

// policyDefs are ValidatingAdmissionPolicy and its binding, with upstream's
// v1 defaults, the validation users meet and kubectl's columns.
func policyDefs(g schema.GroupVersion) []registry.Def {
	return []registry.Def{
		{GroupVersion: g, Resource: "validatingadmissionpolicies", Kind: "ValidatingAdmissionPolicy", HasStatus: true,
			New:     registry.NewObjects[admissionregistrationv1.ValidatingAdmissionPolicy](),
			NewList: registry.NewObjects[admissionregistrationv1.ValidatingAdmissionPolicyList](),
			Hooks: registry.Hooks{
				Generation:     true,
				Defaults:       func(o runtime.Object) { defaultPolicy(&policyOf(o).Spec) },
				Validate:       func(o runtime.Object) field.ErrorList { return validatePolicy(policyOf(o)) },
				ValidateUpdate: func(o, _ runtime.Object) field.ErrorList { return validatePolicy(policyOf(o)) },
				Columns: []metav1.TableColumnDefinition{
					registry.Col("Validations", "integer", 0, "Validations indicates the number of validation rules defined in this configuration"),
					registry.Col("ParamKind", "string", 0, "ParamKind specifies the kind of resources used to parameterize this policy"),
					registry.AgeColumn(),
				},
				Row: func(o runtime.Object) []interface{} {
					p, kind := policyOf(o), "<unset>"
					if pk := p.Spec.ParamKind; pk != nil {
						kind = pk.APIVersion + "/" + pk.Kind
					}
					return []interface{}{int64(len(p.Spec.Validations)), kind, registry.Age(o)}
				},
			}},
		{GroupVersion: g, Resource: "validatingadmissionpolicybindings", Kind: "ValidatingAdmissionPolicyBinding",
			New:     registry.NewObjects[admissionregistrationv1.ValidatingAdmissionPolicyBinding](),
			NewList: registry.NewObjects[admissionregistrationv1.ValidatingAdmissionPolicyBindingList](),
			Hooks: registry.Hooks{
				Generation:     true,
				Defaults:       func(o runtime.Object) { defaultMatchResources(bindingOf(o).Spec.MatchResources) },
				Validate:       func(o runtime.Object) field.ErrorList { return validateBinding(bindingOf(o)) },
				ValidateUpdate: func(o, _ runtime.Object) field.ErrorList { return validateBinding(bindingOf(o)) },
				Columns: []metav1.TableColumnDefinition{
					registry.Col("PolicyName", "string", 0, "PolicyName indicates the policy definition which the policy binding binded to"),
					registry.Col("ParamRef", "string", 0, "ParamRef indicates the param resource which sets the configration param"),
					registry.AgeColumn(),
				},
				Row: func(o runtime.Object) []interface{} {
					b, ref := bindingOf(o), "<unset>"
					if pr := b.Spec.ParamRef; pr != nil {
						ref = pr.Name
						if pr.Namespace != "" {
							ref = pr.Namespace + "/" + pr.Name
						}
						if pr.Selector != nil {
							ref = "*/*"
						}
					}
					return []interface{}{b.Spec.PolicyName, ref, registry.Age(o)}
				},
			}},
	}
}

func defaultPolicy(s *admissionregistrationv1.ValidatingAdmissionPolicySpec) {
	if s.FailurePolicy == nil {
		s.FailurePolicy = ptr.To(admissionregistrationv1.Fail)
	}
	defaultMatchResources(s.MatchConstraints)
}

// defaultMatchResources: matchPolicy Equivalent, empty selectors, rule
// scope "*", as upstream's v1 defaults.
func defaultMatchResources(m *admissionregistrationv1.MatchResources) {
	if m == nil {
		return
	}
	if m.MatchPolicy == nil {
		m.MatchPolicy = ptr.To(admissionregistrationv1.Equivalent)
	}
	if m.NamespaceSelector == nil {
		m.NamespaceSelector = &metav1.LabelSelector{}
	}
	if m.ObjectSelector == nil {
		m.ObjectSelector = &metav1.LabelSelector{}
	}
	for _, rules := range [][]admissionregistrationv1.NamedRuleWithOperations{m.ResourceRules, m.ExcludeResourceRules} {
		for i := range rules {
			if rules[i].Scope == nil {
				rules[i].Scope = ptr.To(admissionregistrationv1.AllScopes)
			}
		}
	}
}

func validatePolicy(p *admissionregistrationv1.ValidatingAdmissionPolicy) field.ErrorList {
	sp := field.NewPath("spec")
	s := &p.Spec
	var errs field.ErrorList
	if len(s.Validations) == 0 && len(s.AuditAnnotations) == 0 {
		errs = append(errs, field.Required(sp.Child("validations"), "validations or auditAnnotations must contain at least one item"))
	}
	if s.FailurePolicy != nil && *s.FailurePolicy != admissionregistrationv1.Fail && *s.FailurePolicy != admissionregistrationv1.Ignore {
		errs = append(errs, field.NotSupported(sp.Child("failurePolicy"), *s.FailurePolicy, []string{"Fail", "Ignore"}))
	}
	if pk := s.ParamKind; pk != nil {
		errs = append(errs, validateParamKind(pk, sp.Child("paramKind"))...)
	}
	if s.MatchConstraints == nil || len(s.MatchConstraints.ResourceRules) == 0 {
		errs = append(errs, field.Required(sp.Child("matchConstraints", "resourceRules"), ""))
	} else {
		errs = append(errs, validateMatchResources(s.MatchConstraints, sp.Child("matchConstraints"))...)
	}
	for i, v := range s.Validations {
		if strings.TrimSpace(v.Expression) == "" {
			errs = append(errs, field.Required(sp.Child("validations").Index(i).Child("expression"), "expression is not specified"))
		}
	}
	for i, v := range s.Variables {
		for _, msg := range utilvalidation.IsCIdentifier(v.Name) {
			errs = append(errs, field.Invalid(sp.Child("variables").Index(i).Child("name"), v.Name, msg))
		}
	}
	errs = append(errs, validateMatchConditions(s.MatchConditions, sp.Child("matchConditions"))...)
	if len(errs) > 0 {
		return errs
	}
	return celcond.ValidatePolicy(s, sp)
}

// validateMatchResources: the defaulted matchPolicy and selectors, and
// each resource rule (and exclude rule) as a webhook rule with unique
// resourceNames.
func validateMatchResources(m *admissionregistrationv1.MatchResources, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	switch mp := m.MatchPolicy; {
	case mp == nil:
		errs = append(errs, field.Required(p.Child("matchPolicy"), ""))
	case *mp != admissionregistrationv1.Exact && *mp != admissionregistrationv1.Equivalent:
		errs = append(errs, field.NotSupported(p.Child("matchPolicy"), *mp, []string{"Equivalent", "Exact"}))
	}
	for _, sel := range []struct {
		s    *metav1.LabelSelector
		name string
	}{{m.NamespaceSelector, "namespaceSelector"}, {m.ObjectSelector, "objectSelector"}} {
		if sel.s == nil {
			errs = append(errs, field.Required(p.Child(sel.name), ""))
			continue
		}
		errs = append(errs, metav1validation.ValidateLabelSelector(sel.s, metav1validation.LabelSelectorValidationOptions{}, p.Child(sel.name))...)
	}
	for _, rules := range []struct {
		r    []admissionregistrationv1.NamedRuleWithOperations
		name string
	}{{m.ResourceRules, "resourceRules"}, {m.ExcludeResourceRules, "excludeResourceRules"}} {
		for i := range rules.r {
			errs = append(errs, validateNamedRule(&rules.r[i], p.Child(rules.name).Index(i))...)
		}
	}
	return errs
}

func validateNamedRule(r *admissionregistrationv1.NamedRuleWithOperations, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	seen := sets.New[string]()
	for i, name := range r.ResourceNames {
		for _, msg := range pathSegmentName(name) {
			errs = append(errs, field.Invalid(p.Child("resourceNames").Index(i), name, msg))
		}
		if seen.Has(name) {
			errs = append(errs, field.Duplicate(p.Child("resourceNames").Index(i), name))
		}
		seen.Insert(name)
	}
	return append(errs, validateRule(r.RuleWithOperations, p)...)
}

func validateBinding(b *admissionregistrationv1.ValidatingAdmissionPolicyBinding) field.ErrorList {
	sp := field.NewPath("spec")
	s := &b.Spec
	var errs field.ErrorList
	if s.PolicyName == "" {
		errs = append(errs, field.Required(sp.Child("policyName"), ""))
	}
	ap := sp.Child("validationActions")
	if len(s.ValidationActions) == 0 {
		errs = append(errs, field.Required(ap, "at least one validation action is required"))
	}
	seen := sets.New[admissionregistrationv1.ValidationAction]()
	for i, a := range s.ValidationActions {
		switch {
		case a != admissionregistrationv1.Deny && a != admissionregistrationv1.Warn && a != admissionregistrationv1.Audit:
			errs = append(errs, field.NotSupported(ap.Index(i), a, []string{"Audit", "Deny", "Warn"}))
		case seen.Has(a):
			errs = append(errs, field.Duplicate(ap.Index(i), a))
		}
		seen.Insert(a)
	}
	if seen.Has(admissionregistrationv1.Deny) && seen.Has(admissionregistrationv1.Warn) {
		errs = append(errs, field.Invalid(ap, s.ValidationActions, "must not contain both Deny and Warn (repeating the same validation failure information in the API response and headers serves no purpose)"))
	}
	errs = append(errs, validateParamRef(s.ParamRef, sp.Child("paramRef"))...)
	if m := s.MatchResources; m != nil {
		errs = append(errs, validateMatchResources(m, sp.Child("matchResources"))...)
	}
	return errs
}
