package celcond

import (
	"context"
	"strings"
	"sync"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	upstream "k8s.io/apiserver/pkg/admission"
	plugincel "k8s.io/apiserver/pkg/admission/plugin/cel"
	"k8s.io/apiserver/pkg/admission/plugin/webhook/matchconditions"
	"k8s.io/apiserver/pkg/cel/environment"

	"github.com/orch/orch/server/admission"
	"github.com/orch/orch/server/auth"
)

// Compiler compiles match conditions; build one and share it.
type Compiler struct {
	once sync.Once
	cond plugincel.ConditionCompiler
}

// New returns the compiler; the CEL environment is built on first use
// (clusters without matchConditions never pay for it).
func New() *Compiler { return &Compiler{} }

func (c *Compiler) compiler() plugincel.ConditionCompiler {
	c.once.Do(func() {
		c.cond = plugincel.NewConditionCompiler(environment.MustBaseEnvSet(environment.DefaultCompatibilityVersion()))
	})
	return c.cond
}

var declarations = plugincel.OptionalVariableDeclarations{HasParams: false, HasAuthorizer: true}

// Validate compiles each condition as a new expression; errors are at
// p[i].expression.
func Validate(conds []admissionregistrationv1.MatchCondition, p *field.Path) field.ErrorList {
	if len(conds) == 0 {
		return nil
	}
	var errs field.ErrorList
	comp := plugincel.NewCompiler(environment.MustBaseEnvSet(environment.DefaultCompatibilityVersion()))
	for i, mc := range conds {
		if strings.TrimSpace(mc.Expression) == "" {
			continue // the registry reports it as required
		}
		r := comp.CompileCELExpression(&matchconditions.MatchCondition{Name: mc.Name, Expression: mc.Expression}, declarations, environment.NewExpressions)
		if r.Error != nil {
			errs = append(errs, field.Invalid(p.Index(i).Child("expression"), mc.Expression, r.Error.Detail))
		}
	}
	return errs
}

// Matcher compiles a webhook's conditions (stored-expressions
// environment, as upstream evaluates them); kind is "admit" or
// "validating".
func (c *Compiler) Matcher(conds []admissionregistrationv1.MatchCondition, fp *admissionregistrationv1.FailurePolicyType, kind, name string) matchconditions.Matcher {
	exprs := make([]plugincel.ExpressionAccessor, len(conds))
	for i, mc := range conds {
		exprs[i] = &matchconditions.MatchCondition{Name: mc.Name, Expression: mc.Expression}
	}
	policy := admissionregistrationv1.Fail
	if fp != nil {
		policy = *fp
	}
	return matchconditions.NewMatcher(c.compiler().CompileCondition(exprs, declarations, environment.StoredExpressions), &policy, "webhook", kind, name)
}

// Match evaluates m on the request a, with authz for the authorizer
// variable.
func Match(ctx context.Context, m matchconditions.Matcher, a *admission.Attributes, authz auth.Authorizer) matchconditions.MatchResult {
	return m.Match(ctx, Versioned(a), nil, authorizerAdapter{authz})
}

// Versioned is a as upstream's admission attributes.
func Versioned(a *admission.Attributes) *upstream.VersionedAttributes {
	rec := upstream.NewAttributesRecord(a.Object, a.OldObject, a.Kind, a.Namespace, a.Name, a.Resource, a.Subresource,
		upstream.Operation(a.Operation), a.Options, a.DryRun, UserInfo(a.User))
	v := &upstream.VersionedAttributes{Attributes: rec, VersionedKind: a.Kind}
	if a.Object != nil {
		v.VersionedObject = upstream.NewLazyObject(a.Object)
	}
	if a.OldObject != nil {
		v.VersionedOldObject = upstream.NewLazyObject(a.OldObject)
	}
	return v
}
