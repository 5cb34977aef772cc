package celrules

import (
	celgo "github.com/google/cel-go/cel"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel/model"
	"k8s.io/apimachinery/pkg/util/validation/field"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	apiservercel "k8s.io/apiserver/pkg/cel"
	"k8s.io/apiserver/pkg/cel/environment"
)

// Compile compiles every x-kubernetes-validations rule and
// messageExpression of a CRD version's schema, reporting what does not
// compile at its path under p (upstream's CRD validation). Rules found in
// existing are checked with the stored-expressions environment (so a
// rule stored before an environment change keeps working), new ones with
// the stricter new-expressions environment.
func Compile(ss *structuralschema.Structural, p *field.Path, existing map[string]bool) field.ErrorList {
	loader := envLoader{existing: existing}
	env := environment.MustBaseEnvSet(environment.DefaultCompatibilityVersion())
	var errs field.ErrorList
	walkSchema(ss, p, true, func(s *structuralschema.Structural, sp *field.Path, root bool) {
		if len(s.XValidations) == 0 {
			return
		}
		results, err := cel.Compile(s, model.SchemaDeclType(s, root), celconfig.PerCallLimit, env, loader)
		if err != nil {
			errs = append(errs, field.InternalError(sp.Child("x-kubernetes-validations"), err))
			return
		}
		for i, r := range results {
			errs = append(errs, compileErrors(r, s.XValidations[i].Rule, sp.Child("x-kubernetes-validations").Index(i))...)
		}
	})
	return errs
}

func compileErrors(r cel.CompilationResult, rule string, rp *field.Path) field.ErrorList {
	var errs field.ErrorList
	if r.Error != nil {
		if r.Error.Type == apiservercel.ErrorTypeRequired {
			errs = append(errs, field.Required(rp.Child("rule"), r.Error.Detail))
		} else {
			errs = append(errs, field.Invalid(rp.Child("rule"), rule, r.Error.Detail))
		}
	}
	if r.MessageExpressionError != nil {
		errs = append(errs, field.Invalid(rp.Child("messageExpression"), rule, r.MessageExpressionError.Detail))
	}
	return errs
}

// RuleSet is every rule and messageExpression of a schema (for
// CompileRules on update).
func RuleSet(ss *structuralschema.Structural) map[string]bool {
	out := map[string]bool{}
	walkSchema(ss, field.NewPath(""), true, func(s *structuralschema.Structural, _ *field.Path, _ bool) {
		for _, r := range s.XValidations {
			out[r.Rule] = true
			if r.MessageExpression != "" {
				out[r.MessageExpression] = true
			}
		}
	})
	return out
}

// walkSchema visits every node of a structural schema with its path in
// the CRD (properties[x], items, additionalProperties).
func walkSchema(s *structuralschema.Structural, p *field.Path, root bool, visit func(*structuralschema.Structural, *field.Path, bool)) {
	if s == nil {
		return
	}
	visit(s, p, root)
	for name := range s.Properties {
		prop := s.Properties[name]
		walkSchema(&prop, p.Child("properties").Key(name), false, visit)
	}
	walkSchema(s.Items, p.Child("items"), false, visit)
	if s.AdditionalProperties != nil {
		walkSchema(s.AdditionalProperties.Structural, p.Child("additionalProperties"), false, visit)
	}
}

// envLoader picks the stored-expressions environment for expressions
// that already existed and the new-expressions one for the others.
type envLoader struct{ existing map[string]bool }

func (l envLoader) RuleEnv(set *environment.EnvSet, expr string) *celgo.Env {
	if l.existing[expr] {
		return set.StoredExpressionsEnv()
	}
	return set.NewExpressionsEnv()
}

func (l envLoader) MessageExpressionEnv(set *environment.EnvSet, expr string) *celgo.Env {
	return l.RuleEnv(set, expr)
}
