package admissionregistration

import (
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	"github.com/orch/orch/server/admission/celcond"
	"github.com/orch/orch/server/registry"
)

func mutatingPolicyOf(o runtime.Object) *admissionregistrationv1.MutatingAdmissionPolicy {
	return o.(*admissionregistrationv1.MutatingAdmissionPolicy)
}

func mutatingBindingOf(o runtime.Object) *admissionregistrationv1.MutatingAdmissionPolicyBinding {
	return o.(*admissionregistrationv1.MutatingAdmissionPolicyBinding)
}

// mutatingPolicyDefs are MutatingAdmissionPolicy and its binding (no
// status subresource, as upstream), with upstream's v1 defaults,
// validation and kubectl's columns.
func mutatingPolicyDefs(g schema.GroupVersion) []registry.Def {
	return []registry.Def{
		{GroupVersion: g, Resource: "mutatingadmissionpolicies", Kind: "MutatingAdmissionPolicy",
			New:     registry.NewObjects[admissionregistrationv1.MutatingAdmissionPolicy](),
			NewList: registry.NewObjects[admissionregistrationv1.MutatingAdmissionPolicyList](),
			Hooks: registry.Hooks{
				Generation:     true,
				Defaults:       func(o runtime.Object) { defaultMutatingPolicy(&mutatingPolicyOf(o).Spec) },
				Validate:       func(o runtime.Object) field.ErrorList { return ValidateMutatingPolicy(mutatingPolicyOf(o)) },
				ValidateUpdate: func(o, _ runtime.Object) field.ErrorList { return ValidateMutatingPolicy(mutatingPolicyOf(o)) },
				Columns: []metav1.TableColumnDefinition{
					registry.Col("Mutations", "integer", 0, "Mutation indicates the number of mutations rules defined in this configuration"),
					registry.Col("ParamKind", "string", 0, "ParamKind specifies the kind of resources used to parameterize this policy"),
					registry.AgeColumn(),
				},
				Row: func(o runtime.Object) []interface{} {
					p, kind := mutatingPolicyOf(o), "<unset>"
					if pk := p.Spec.ParamKind; pk != nil {
						kind = pk.APIVersion + "/" + pk.Kind
					}
					return []interface{}{int64(len(p.Spec.Mutations)), kind, registry.Age(o)}
				},
			}},
		{GroupVersion: g, Resource: "mutatingadmissionpolicybindings", Kind: "MutatingAdmissionPolicyBinding",
			New:     registry.NewObjects[admissionregistrationv1.MutatingAdmissionPolicyBinding](),
			NewList: registry.NewObjects[admissionregistrationv1.MutatingAdmissionPolicyBindingList](),
			Hooks: registry.Hooks{
				Generation:     true,
				Defaults:       func(o runtime.Object) { defaultMatchResources(mutatingBindingOf(o).Spec.MatchResources) },
				Validate:       func(o runtime.Object) field.ErrorList { return ValidateMutatingBinding(mutatingBindingOf(o)) },
				ValidateUpdate: func(o, _ runtime.Object) field.ErrorList { return ValidateMutatingBinding(mutatingBindingOf(o)) },
				Columns: []metav1.TableColumnDefinition{
					registry.Col("PolicyName", "string", 0, "PolicyName indicates the policy definition which the policy binding binded to"),
					registry.Col("ParamRef", "string", 0, "ParamRef indicates the param resource which sets the configuration param"),
					registry.AgeColumn(),
				},
				Row: func(o runtime.Object) []interface{} {
					b := mutatingBindingOf(o)
					return []interface{}{b.Spec.PolicyName, mutatingParamRef(b.Spec.ParamRef), registry.Age(o)}
				},
			}},
	}
}

// mutatingParamRef prints a binding's paramRef as kubectl does.
func mutatingParamRef(pr *admissionregistrationv1.ParamRef) string {
	switch {
	case pr == nil:
		return "<unset>"
	case pr.Name != "" && pr.Namespace != "":
		return pr.Namespace + "/" + pr.Name
	case pr.Name != "":
		return "*/" + pr.Name
	case pr.Selector != nil:
		return metav1.FormatLabelSelector(pr.Selector)
	}
	return "<unset>"
}

func defaultMutatingPolicy(s *admissionregistrationv1.MutatingAdmissionPolicySpec) {
	if s.FailurePolicy == nil {
		s.FailurePolicy = ptr.To(admissionregistrationv1.Fail)
	}
	defaultMatchResources(s.MatchConstraints)
}

// mutatingOperations are the operations a mutating policy may match
// (there is no object to mutate on DELETE).
var mutatingOperations = []string{"*", "CONNECT", "CREATE", "UPDATE"}

var reinvocationPolicies = []string{string(admissionregistrationv1.IfNeededReinvocationPolicy), string(admissionregistrationv1.NeverReinvocationPolicy)}

// ValidateMutatingPolicy checks a MutatingAdmissionPolicy as upstream's
// validation does, then compiles its CEL expressions.
func ValidateMutatingPolicy(p *admissionregistrationv1.MutatingAdmissionPolicy) field.ErrorList {
	sp := field.NewPath("spec")
	s := &p.Spec
	var errs field.ErrorList
	switch {
	case s.FailurePolicy == nil:
		errs = append(errs, field.Required(sp.Child("failurePolicy"), ""))
	case *s.FailurePolicy != admissionregistrationv1.Fail && *s.FailurePolicy != admissionregistrationv1.Ignore:
		errs = append(errs, field.NotSupported(sp.Child("failurePolicy"), *s.FailurePolicy, []string{"Fail", "Ignore"}))
	}
	if pk := s.ParamKind; pk != nil {
		errs = append(errs, validateParamKind(pk, sp.Child("paramKind"))...)
	}
	if m := s.MatchConstraints; m == nil {
		errs = append(errs, field.Required(sp.Child("matchConstraints"), ""))
	} else {
		errs = append(errs, validateMatchResources(m, sp.Child("matchConstraints"))...)
		if len(m.ResourceRules) == 0 {
			errs = append(errs, field.Required(sp.Child("matchConstraints", "resourceRules"), ""))
		}
		errs = append(errs, validateMutatingOperations(m, sp.Child("matchConstraints"))...)
	}
	errs = append(errs, validateMatchConditions(s.MatchConditions, sp.Child("matchConditions"))...)
	errs = append(errs, validateVariables(s.Variables, sp.Child("variables"))...)
	if len(s.Mutations) == 0 {
		errs = append(errs, field.Required(sp.Child("mutations"), "mutations must contain at least one item"))
	}
	for i := range s.Mutations {
		errs = append(errs, validateMutation(&s.Mutations[i], sp.Child("mutations").Index(i))...)
	}
	switch {
	case s.ReinvocationPolicy == "":
		errs = append(errs, field.Required(sp.Child("reinvocationPolicy"), ""))
	case !sets.New(reinvocationPolicies...).Has(string(s.ReinvocationPolicy)):
		errs = append(errs, field.NotSupported(sp.Child("reinvocationPolicy"), s.ReinvocationPolicy, reinvocationPolicies))
	}
	if len(errs) > 0 {
		return errs
	}
	return celcond.ValidateMutatingPolicy(s, sp)
}

func validateMutatingOperations(m *admissionregistrationv1.MatchResources, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, r := range m.ResourceRules {
		for _, op := range r.Operations {
			if !sets.New(mutatingOperations...).Has(string(op)) {
				errs = append(errs, field.NotSupported(p.Child("resourceRules", "operations"), op, mutatingOperations))
			}
		}
	}
	return errs
}

func validateVariables(vars []admissionregistrationv1.Variable, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, v := range vars {
		vp := p.Index(i)
		if strings.TrimSpace(v.Name) == "" {
			errs = append(errs, field.Required(vp.Child("name"), "name is not specified"))
		} else if !isCELIdentifier(v.Name) {
			errs = append(errs, field.Invalid(vp.Child("name"), v.Name, "must be a valid CEL identifier"))
		}
		if strings.TrimSpace(v.Expression) == "" {
			errs = append(errs, field.Required(vp.Child("expression"), "expression is not specified"))
		}
	}
	return errs
}

func validateMutation(m *admissionregistrationv1.Mutation, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	switch m.PatchType {
	case "":
		errs = append(errs, field.Required(p.Child("patchType"), ""))
	case admissionregistrationv1.PatchTypeJSONPatch:
		if m.JSONPatch == nil {
			errs = append(errs, field.Required(p.Child("jsonPatch"), "must be specified when patchType is JSONPatch"))
		} else if strings.TrimSpace(m.JSONPatch.Expression) == "" {
			errs = append(errs, field.Required(p.Child("jsonPatch", "expression"), ""))
		}
		if m.ApplyConfiguration != nil {
			errs = append(errs, field.Invalid(p.Child("applyConfiguration"), "{applyConfiguration}", "must not be specified when patchType is JSONPatch"))
		}
	case admissionregistrationv1.PatchTypeApplyConfiguration:
		if m.ApplyConfiguration == nil {
			errs = append(errs, field.Required(p.Child("applyConfiguration"), "must be specified when patchType is ApplyConfiguration"))
		} else if strings.TrimSpace(m.ApplyConfiguration.Expression) == "" {
			errs = append(errs, field.Required(p.Child("applyConfiguration", "expression"), ""))
		}
		if m.JSONPatch != nil {
			errs = append(errs, field.Invalid(p.Child("jsonPatch"), "{jsonPatch}", "must not be specified when patchType is ApplyConfiguration"))
		}
	default:
		errs = append(errs, field.NotSupported(p.Child("patchType"), m.PatchType, []string{"ApplyConfiguration", "JSONPatch"}))
	}
	return errs
}

// ValidateMutatingBinding checks a MutatingAdmissionPolicyBinding as
// upstream's validation does.
func ValidateMutatingBinding(b *admissionregistrationv1.MutatingAdmissionPolicyBinding) field.ErrorList {
	sp := field.NewPath("spec")
	s := &b.Spec
	var errs field.ErrorList
	if s.PolicyName == "" {
		errs = append(errs, field.Required(sp.Child("policyName"), ""))
	} else {
		for _, msg := range validateSubdomain(s.PolicyName) {
			errs = append(errs, field.Invalid(sp.Child("policyName"), s.PolicyName, msg))
		}
	}
	errs = append(errs, validateParamRef(s.ParamRef, sp.Child("paramRef"))...)
	if m := s.MatchResources; m != nil {
		errs = append(errs, validateMatchResources(m, sp.Child("matchResources"))...)
		errs = append(errs, validateMutatingOperations(m, sp.Child("matchResources"))...)
	}
	return errs
}
