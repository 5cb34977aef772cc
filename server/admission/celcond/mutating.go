package celcond

import (
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	plugincel "k8s.io/apiserver/pkg/admission/plugin/cel"
	"k8s.io/apiserver/pkg/admission/plugin/policy/mutating"
	"k8s.io/apiserver/pkg/admission/plugin/policy/mutating/patch"
	"k8s.io/apiserver/pkg/admission/plugin/webhook/matchconditions"
	"k8s.io/apiserver/pkg/cel/environment"
)

// ValidateMutatingPolicy compiles every CEL expression of a
// MutatingAdmissionPolicy as upstream does when it is written: variables
// first (later expressions may use them), then matchConditions, then each
// mutation's applyConfiguration or jsonPatch expression with the patch
// types (Object{...}, JSONPatch{...}) declared. Empty expressions are left
// to the registry, which reports them as required.
func ValidateMutatingPolicy(spec *admissionregistrationv1.MutatingAdmissionPolicySpec, p *field.Path) field.ErrorList {
	comp, err := plugincel.NewCompositedCompiler(environment.MustBaseEnvSet(environment.DefaultCompatibilityVersion()))
	if err != nil {
		return field.ErrorList{field.InternalError(p, err)}
	}
	hasParams := spec.ParamKind != nil
	opts := plugincel.OptionalVariableDeclarations{HasParams: hasParams, HasAuthorizer: true}
	var errs field.ErrorList
	check := func(acc plugincel.ExpressionAccessor, o plugincel.OptionalVariableDeclarations, fp *field.Path, expr string) {
		if strings.TrimSpace(expr) == "" {
			return
		}
		if r := comp.CompileCELExpression(acc, o, environment.NewExpressions); r.Error != nil {
			errs = append(errs, field.Invalid(fp, expr, r.Error.Detail))
		}
	}
	for i, v := range spec.Variables {
		if strings.TrimSpace(v.Expression) == "" {
			continue
		}
		r := comp.CompileAndStoreVariable(&mutating.Variable{Name: v.Name, Expression: v.Expression}, opts, environment.NewExpressions)
		if r.Error != nil {
			errs = append(errs, field.Invalid(p.Child("variables").Index(i).Child("expression"), v.Expression, r.Error.Detail))
		}
	}
	for i, mc := range spec.MatchConditions {
		check(&matchconditions.MatchCondition{Name: mc.Name, Expression: mc.Expression}, opts, p.Child("matchConditions").Index(i).Child("expression"), mc.Expression)
	}
	patchOpts := plugincel.OptionalVariableDeclarations{HasParams: hasParams, HasAuthorizer: true, HasPatchTypes: true}
	for i, m := range spec.Mutations {
		mp := p.Child("mutations").Index(i)
		if ac := m.ApplyConfiguration; ac != nil && m.PatchType == admissionregistrationv1.PatchTypeApplyConfiguration {
			expr := strings.TrimSpace(ac.Expression)
			check(&patch.ApplyConfigurationCondition{Expression: expr}, patchOpts, mp.Child("applyConfiguration", "expression"), ac.Expression)
		}
		if jp := m.JSONPatch; jp != nil && m.PatchType == admissionregistrationv1.PatchTypeJSONPatch {
			expr := strings.TrimSpace(jp.Expression)
			check(&patch.JSONPatchCondition{Expression: expr}, patchOpts, mp.Child("jsonPatch", "expression"), jp.Expression)
		}
	}
	return errs
}
