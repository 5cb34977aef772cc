package crd

import (
	"context"
	"fmt"
	"strings"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/listtype"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/objectmeta"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/pruning"
	"k8s.io/apimachinery/pkg/util/validation/field"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	openapierrors "k8s.io/kube-openapi/pkg/validation/errors"
	"k8s.io/kube-openapi/pkg/validation/spec"
	"k8s.io/kube-openapi/pkg/validation/strfmt"
	"k8s.io/kube-openapi/pkg/validation/validate"
)

// Schema is one version's structural schema and its validator.
type Schema struct {
	Structural *structuralschema.Structural
	validator  *validate.SchemaValidator
	cel        *cel.Validator // nil without x-kubernetes-validations
}

// NewSchema converts a v1 schema to its structural form (which must be
// valid: the CRD's validation checked it) and builds the validator.
func NewSchema(v1 *apiextensionsv1.JSONSchemaProps) (*Schema, error) {
	s, err := Structural(v1)
	if err != nil {
		return nil, err
	}
	return &Schema{Structural: s, validator: newValidator(s), cel: cel.NewValidator(s, true, celconfig.PerCallLimit)}, nil
}

// Structural converts a v1 schema to a structural schema.
func Structural(v1 *apiextensionsv1.JSONSchemaProps) (*structuralschema.Structural, error) {
	if v1 == nil {
		return nil, fmt.Errorf("no schema")
	}
	var internal apiextensions.JSONSchemaProps
	if err := apiextensionsv1.Convert_v1_JSONSchemaProps_To_apiextensions_JSONSchemaProps(v1, &internal, nil); err != nil {
		return nil, fmt.Errorf("converting the schema: %w", err)
	}
	return structuralschema.NewStructural(&internal)
}

// newValidator is kube-openapi's validator over the schema, with the root
// metadata left to ObjectMeta validation and int-or-string spelled out.
func newValidator(s *structuralschema.Structural) *validate.SchemaValidator {
	os := s.ToKubeOpenAPI()
	if md, ok := os.Properties["metadata"]; ok {
		os.Properties["metadata"] = spec.Schema{SchemaProps: spec.SchemaProps{Type: md.Type}}
	}
	intOrString(os)
	return validate.NewSchemaValidator(os, nil, "", strfmt.Default)
}

func intOrString(s *spec.Schema) {
	if s == nil {
		return
	}
	if v, ok := s.Extensions["x-kubernetes-int-or-string"]; ok && v == true && len(s.Type) == 0 && len(s.AnyOf) == 0 {
		s.AnyOf = []spec.Schema{{SchemaProps: spec.SchemaProps{Type: []string{"integer"}}}, {SchemaProps: spec.SchemaProps{Type: []string{"string"}}}}
	}
	for k, p := range s.Properties {
		intOrString(&p)
		s.Properties[k] = p
	}
	if s.Items != nil {
		intOrString(s.Items.Schema)
	}
	if s.AdditionalProperties != nil {
		intOrString(s.AdditionalProperties.Schema)
	}
}

// Prune drops fields the schema does not know (unless preserved) and
// returns their paths, for fieldValidation.
func (s *Schema) Prune(obj map[string]interface{}) []string {
	unknown := pruning.PruneWithOptions(obj, s.Structural, true, structuralschema.UnknownFieldPathOptions{TrackUnknownFieldPaths: true})
	_, dropped := objectmeta.CoerceWithOptions(nil, obj, s.Structural, true,
		objectmeta.CoerceOptions{DropInvalidFields: true, ReturnUnknownFieldPaths: true})
	return append(unknown, dropped...)
}

// Validate checks obj against the schema: types and value validations,
// list types, embedded resources' metadata, and the CEL rules (old is
// the object before an update, for transition rules; nil on create).
func (s *Schema) Validate(ctx context.Context, obj, old map[string]interface{}) field.ErrorList {
	var errs field.ErrorList
	res := s.validator.Validate(obj)
	for _, e := range res.Errors {
		errs = append(errs, toFieldError(e))
	}
	errs = append(errs, listtype.ValidateListSetsAndMaps(nil, s.Structural, obj)...)
	errs = append(errs, objectmeta.Validate(ctx, nil, obj, s.Structural, true)...)
	return append(errs, s.validateRules(ctx, errs, obj, old)...)
}

// toFieldError turns a kube-openapi validation error into a field error
// naming the path.
func toFieldError(err error) *field.Error {
	v, ok := err.(*openapierrors.Validation)
	if !ok {
		return field.Invalid(nil, nil, err.Error())
	}
	path := field.NewPath(strings.TrimPrefix(v.Name, "."))
	if v.Name == "" || v.Name == "." {
		path = nil
	}
	switch v.Code() {
	case openapierrors.RequiredFailCode:
		return field.Required(path, "")
	case openapierrors.EnumFailCode:
		var allowed []string
		for _, a := range v.Values {
			allowed = append(allowed, fmt.Sprint(a))
		}
		return field.NotSupported(path, v.Value, allowed)
	}
	msg := v.Error()
	if i := strings.Index(msg, " in body "); i >= 0 {
		msg = strings.TrimSpace(msg[i+len(" in body "):])
	}
	return field.Invalid(path, v.Value, msg)
}
