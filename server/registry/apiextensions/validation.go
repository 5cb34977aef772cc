package apiextensions

import (
	"fmt"
	"maps"
	"strings"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apimachinery/pkg/util/sets"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/orch/orch/server/crd/celrules"
)

// Validate checks a CRD as upstream's ValidateCustomResourceDefinition does
// for what users meet: name, group, names, scope, versions, schemas (which
// must be structural, with CEL rules that compile), subresources, printer
// columns and conversion.
func Validate(c *apiextensionsv1.CustomResourceDefinition) field.ErrorList {
	return validate(c, nil)
}

// validate is Validate; existing holds the CEL expressions the CRD had
// before an update.
func validate(c *apiextensionsv1.CustomResourceDefinition, existing map[string]bool) field.ErrorList {
	spec := field.NewPath("spec")
	var errs field.ErrorList
	if want := c.Spec.Names.Plural + "." + c.Spec.Group; c.Name != want {
		errs = append(errs, field.Invalid(field.NewPath("metadata", "name"), c.Name,
			fmt.Sprintf("must be spec.names.plural+\".\"+spec.group")))
	}
	errs = append(errs, validateGroup(c.Spec.Group, spec.Child("group"))...)
	errs = append(errs, validateNames(c.Spec.Names, spec.Child("names"))...)
	switch c.Spec.Scope {
	case apiextensionsv1.ClusterScoped, apiextensionsv1.NamespaceScoped:
	case "":
		errs = append(errs, field.Required(spec.Child("scope"), ""))
	default:
		errs = append(errs, field.NotSupported(spec.Child("scope"), c.Spec.Scope, []string{"Cluster", "Namespaced"}))
	}
	errs = append(errs, validateVersions(c.Spec.Versions, spec.Child("versions"), existing)...)
	errs = append(errs, validateConversion(c.Spec.Conversion, spec.Child("conversion"))...)
	if c.Spec.PreserveUnknownFields {
		errs = append(errs, field.Invalid(spec.Child("preserveUnknownFields"), true,
			"cannot set to true, set x-kubernetes-preserve-unknown-fields to true in spec.versions[*].schema instead"))
	}
	return errs
}

// ValidateUpdate adds the rules of an update: the scope stays.
func ValidateUpdate(c, old *apiextensionsv1.CustomResourceDefinition) field.ErrorList {
	errs := validate(c, rulesOf(old))
	if c.Spec.Scope != old.Spec.Scope {
		errs = append(errs, field.Invalid(field.NewPath("spec", "scope"), c.Spec.Scope, "field is immutable"))
	}
	return errs
}

func validateGroup(g string, p *field.Path) field.ErrorList {
	if g == "" {
		return field.ErrorList{field.Required(p, "")}
	}
	var errs field.ErrorList
	for _, msg := range utilvalidation.IsDNS1123Subdomain(g) {
		errs = append(errs, field.Invalid(p, g, msg))
	}
	if len(strings.Split(g, ".")) < 2 {
		errs = append(errs, field.Invalid(p, g, "should be a domain with at least one dot"))
	}
	return errs
}

func validateNames(n apiextensionsv1.CustomResourceDefinitionNames, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	label := func(v string, fp *field.Path, required bool) {
		if v == "" {
			if required {
				errs = append(errs, field.Required(fp, ""))
			}
			return
		}
		for _, msg := range utilvalidation.IsDNS1035Label(v) {
			errs = append(errs, field.Invalid(fp, v, msg))
		}
	}
	label(n.Plural, p.Child("plural"), true)
	label(n.Singular, p.Child("singular"), false)
	label(strings.ToLower(n.Kind), p.Child("kind"), true)
	label(strings.ToLower(n.ListKind), p.Child("listKind"), true)
	if n.Kind != "" && n.Kind == n.ListKind {
		errs = append(errs, field.Invalid(p.Child("listKind"), n.ListKind, "kind and listKind may not be the same"))
	}
	for i, s := range n.ShortNames {
		label(s, p.Child("shortNames").Index(i), true)
	}
	for i, s := range n.Categories {
		label(s, p.Child("categories").Index(i), true)
	}
	return errs
}

// rulesOf is every CEL expression in the schemas of c.
func rulesOf(c *apiextensionsv1.CustomResourceDefinition) map[string]bool {
	out := map[string]bool{}
	for _, v := range c.Spec.Versions {
		if v.Schema == nil {
			continue
		}
		if ss, err := structural(v.Schema.OpenAPIV3Schema); err == nil {
			maps.Copy(out, celrules.RuleSet(ss))
		}
	}
	return out
}

func validateVersions(vs []apiextensionsv1.CustomResourceDefinitionVersion, p *field.Path, existing map[string]bool) field.ErrorList {
	var errs field.ErrorList
	if len(vs) == 0 {
		return field.ErrorList{field.Invalid(p, vs, "must have exactly one version marked as storage version")}
	}
	names, storage, served := sets.New[string](), 0, 0
	for i, v := range vs {
		vp := p.Index(i)
		if names.Has(v.Name) {
			errs = append(errs, field.Invalid(vp.Child("name"), v.Name, "must appear only once"))
		}
		names.Insert(v.Name)
		for _, msg := range utilvalidation.IsDNS1035Label(v.Name) {
			errs = append(errs, field.Invalid(vp.Child("name"), v.Name, msg))
		}
		if v.Storage {
			storage++
		}
		if v.Served {
			served++
		}
		errs = append(errs, validateVersion(v, vp, existing)...)
	}
	if storage != 1 {
		errs = append(errs, field.Invalid(p, vs, "must have exactly one version marked as storage version"))
	}
	if served == 0 {
		errs = append(errs, field.Invalid(p, vs, "must have at least one version marked as served"))
	}
	return errs
}

func validateVersion(v apiextensionsv1.CustomResourceDefinitionVersion, p *field.Path, existing map[string]bool) field.ErrorList {
	var errs field.ErrorList
	sp := p.Child("schema", "openAPIV3Schema")
	if v.Schema == nil || v.Schema.OpenAPIV3Schema == nil {
		errs = append(errs, field.Required(sp, "schemas are required"))
	} else {
		errs = append(errs, validateSchema(v.Schema.OpenAPIV3Schema, sp, existing)...)
	}
	if sub := v.Subresources; sub != nil && sub.Scale != nil {
		errs = append(errs, validateScale(sub.Scale, p.Child("subresources", "scale"))...)
	}
	for i, c := range v.AdditionalPrinterColumns {
		cp := p.Child("additionalPrinterColumns").Index(i)
		if c.Name == "" {
			errs = append(errs, field.Required(cp.Child("name"), ""))
		}
		if !sets.New("integer", "number", "string", "boolean", "date").Has(c.Type) {
			errs = append(errs, field.NotSupported(cp.Child("type"), c.Type, []string{"integer", "number", "string", "boolean", "date"}))
		}
		if c.JSONPath == "" {
			errs = append(errs, field.Required(cp.Child("jsonPath"), ""))
		}
	}
	return errs
}

// validateSchema: the root is an object, the schema is structural and its
// CEL rules compile (checked only on an otherwise valid schema, as
// upstream).
func validateSchema(s *apiextensionsv1.JSONSchemaProps, p *field.Path, existing map[string]bool) field.ErrorList {
	var errs field.ErrorList
	if s.Type != "object" {
		errs = append(errs, field.Invalid(p.Child("type"), s.Type, "must be object at the root"))
	}
	ss, err := structural(s)
	if err != nil {
		return append(errs, field.Invalid(p, "", err.Error()))
	}
	errs = append(errs, structuralschema.ValidateStructural(p, ss)...)
	if len(errs) > 0 {
		return errs
	}
	return celrules.Compile(ss, p, existing)
}

// structural converts a v1 schema to its structural form.
func structural(s *apiextensionsv1.JSONSchemaProps) (*structuralschema.Structural, error) {
	var internal apiextensions.JSONSchemaProps
	if err := apiextensionsv1.Convert_v1_JSONSchemaProps_To_apiextensions_JSONSchemaProps(s, &internal, nil); err != nil {
		return nil, err
	}
	return structuralschema.NewStructural(&internal)
}

func validateScale(s *apiextensionsv1.CustomResourceSubresourceScale, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	path := func(v string, fp *field.Path, prefixes ...string) {
		for _, pre := range prefixes {
			if strings.HasPrefix(v, pre) {
				return
			}
		}
		errs = append(errs, field.Invalid(fp, v, "should be a json path under "+strings.Join(prefixes, " or ")))
	}
	path(s.SpecReplicasPath, p.Child("specReplicasPath"), ".spec.")
	path(s.StatusReplicasPath, p.Child("statusReplicasPath"), ".status.")
	if s.LabelSelectorPath != nil {
		path(*s.LabelSelectorPath, p.Child("labelSelectorPath"), ".spec.", ".status.")
	}
	return errs
}

func validateConversion(c *apiextensionsv1.CustomResourceConversion, p *field.Path) field.ErrorList {
	if c == nil {
		return nil
	}
	switch c.Strategy {
	case apiextensionsv1.NoneConverter:
		if c.Webhook != nil {
			return field.ErrorList{field.Forbidden(p.Child("webhook"), "should not be set when strategy is not set to Webhook")}
		}
	case apiextensionsv1.WebhookConverter:
		if c.Webhook == nil || c.Webhook.ClientConfig == nil {
			return field.ErrorList{field.Required(p.Child("webhook", "clientConfig"), "required when strategy is set to Webhook")}
		}
	default:
		return field.ErrorList{field.NotSupported(p.Child("strategy"), c.Strategy, []string{"None", "Webhook"})}
	}
	return nil
}
