package crd

import (
	"context"

	"k8s.io/apimachinery/pkg/util/validation/field"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
)

// validateRules runs the schema's x-kubernetes-validations (CEL) on obj,
// with old for transition rules (nil on create), as upstream's strategy
// does: not when the schema checks already found the object malformed,
// and within the runtime cost budget.
func (s *Schema) validateRules(ctx context.Context, errs field.ErrorList, obj, old map[string]interface{}) field.ErrorList {
	if s.cel == nil {
		return nil
	}
	for _, e := range errs {
		switch e.Type {
		case field.ErrorTypeNotSupported, field.ErrorTypeRequired, field.ErrorTypeTooLong, field.ErrorTypeTooMany, field.ErrorTypeTypeInvalid:
			return field.ErrorList{field.Invalid(nil, nil,
				"some validation rules were not checked because the object was invalid; correct the existing errors to complete validation")}
		}
	}
	var oldObj interface{}
	if old != nil {
		oldObj = old
	}
	out, _ := s.cel.Validate(ctx, nil, s.Structural, obj, oldObj, celconfig.RuntimeCELCostBudget)
	return out
}
