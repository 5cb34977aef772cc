package celcond

import (
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	plugincel "k8s.io/apiserver/pkg/admission/plugin/cel"
	"k8s.io/apiserver/pkg/admission/plugin/policy/validating"
	"k8s.io/apiserver/pkg/admission/plugin/webhook/matchconditions"
	"k8s.io/apiserver/pkg/cel/environment"
)

// ValidatePolicy compiles every CEL expression of a
// ValidatingAdmissionPolicy as upstream does when it is written —
// variables first (later expressions may use them), then matchConditions,
// validations with their messageExpressions, and auditAnnotations —
// reporting what does not compile at its path under spec.
func ValidatePolicy(spec *admissionregistrationv1.ValidatingAdmissionPolicySpec, p *field.Path) field.ErrorList {
	comp, err := plugincel.NewCompositedCompiler(environment.MustBaseEnvSet(environment.DefaultCompatibilityVersion()))
	if err != nil {
		return field.ErrorList{field.InternalError(p, err)}
	}
	opts := plugincel.OptionalVariableDeclarations{HasParams: spec.ParamKind != nil, HasAuthorizer: true}
	var errs field.ErrorList
	check := func(acc plugincel.ExpressionAccessor, fp *field.Path, expr string) {
		if r := comp.CompileCELExpression(acc, opts, environment.NewExpressions); r.Error != nil {
			errs = append(errs, field.Invalid(fp, expr, r.Error.Detail))
		}
	}
	for i, v := range spec.Variables {
		r := comp.CompileAndStoreVariable(&validating.Variable{Name: v.Name, Expression: v.Expression}, opts, environment.NewExpressions)
		if r.Error != nil {
			errs = append(errs, field.Invalid(p.Child("variables").Index(i).Child("expression"), v.Expression, r.Error.Detail))
		}
	}
	for i, mc := range spec.MatchConditions {
		check(&matchconditions.MatchCondition{Name: mc.Name, Expression: mc.Expression}, p.Child("matchConditions").Index(i).Child("expression"), mc.Expression)
	}
	for i, v := range spec.Validations {
		vp := p.Child("validations").Index(i)
		check(&validating.ValidationCondition{Expression: v.Expression, Message: v.Message, Reason: v.Reason}, vp.Child("expression"), v.Expression)
		if v.MessageExpression != "" {
			check(&validating.MessageExpressionCondition{MessageExpression: v.MessageExpression}, vp.Child("messageExpression"), v.MessageExpression)
		}
	}
	for i, a := range spec.AuditAnnotations {
		check(&validating.AuditAnnotationCondition{Key: a.Key, ValueExpression: a.ValueExpression},
			p.Child("auditAnnotations").Index(i).Child("valueExpression"), a.ValueExpression)
	}
	return errs
}
