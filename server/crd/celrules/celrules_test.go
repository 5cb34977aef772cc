package celrules

import (
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

func schemaWith(rules ...apiextensionsv1.ValidationRule) *structuralschema.Structural {
	spec := structuralschema.Structural{Generic: structuralschema.Generic{Type: "object"},
		Properties: map[string]structuralschema.Structural{
			"min": {Generic: structuralschema.Generic{Type: "integer"}},
			"max": {Generic: structuralschema.Generic{Type: "integer"}},
		},
		ValidationExtensions: structuralschema.ValidationExtensions{XValidations: rules}}
	return &structuralschema.Structural{Generic: structuralschema.Generic{Type: "object"},
		Properties: map[string]structuralschema.Structural{"spec": spec}}
}

func TestCompile(t *testing.T) {
	root := field.NewPath("spec", "versions").Index(0).Child("schema", "openAPIV3Schema")
	for _, c := range []struct {
		name     string
		rules    []apiextensionsv1.ValidationRule
		existing map[string]bool
		want     []string // "path: detail fragment"
	}{
		{"good", []apiextensionsv1.ValidationRule{{Rule: "self.min <= self.max", MessageExpression: "'min ' + string(self.min)"}}, nil, nil},
		{"syntax", []apiextensionsv1.ValidationRule{{Rule: "self.min <="}}, nil,
			[]string{"spec.versions[0].schema.openAPIV3Schema.properties[spec].x-kubernetes-validations[0].rule: compilation failed"}},
		{"unknown field", []apiextensionsv1.ValidationRule{{Rule: "self.nope > 1"}}, nil,
			[]string{"x-kubernetes-validations[0].rule: compilation failed"}},
		{"not a bool", []apiextensionsv1.ValidationRule{{Rule: "self.min"}}, nil,
			[]string{"x-kubernetes-validations[0].rule: cel expression must evaluate to a bool"}},
		{"bad messageExpression", []apiextensionsv1.ValidationRule{{Rule: "true", MessageExpression: "self.min"}}, nil,
			[]string{"x-kubernetes-validations[0].messageExpression: messageExpression must evaluate to a string"}},
	} {
		errs := Compile(schemaWith(c.rules...), root, c.existing)
		if len(errs) != len(c.want) {
			t.Errorf("%s: %v, want %v", c.name, errs, c.want)
			continue
		}
		for i, w := range c.want {
			path, detail, _ := strings.Cut(w, ": ")
			if !strings.HasSuffix(errs[i].Field, path) || !strings.Contains(errs[i].Detail, detail) {
				t.Errorf("%s: error %d = %s: %s, want %s", c.name, i, errs[i].Field, errs[i].Detail, w)
			}
		}
	}
}

func TestRuleSet(t *testing.T) {
	got := RuleSet(schemaWith(apiextensionsv1.ValidationRule{Rule: "a", MessageExpression: "b"}))
	if len(got) != 2 || !got["a"] || !got["b"] {
		t.Fatalf("RuleSet: %v", got)
	}
}
