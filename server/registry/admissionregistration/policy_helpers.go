package admissionregistration

import (
	"fmt"
	"regexp"
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/sets"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

var celIdent = regexp.MustCompile(`^[_a-zA-Z][_a-zA-Z0-9]*$`)

var celReserved = sets.New("true", "false", "null", "in", "as", "break", "const", "continue", "else",
	"for", "function", "if", "import", "let", "loop", "package", "namespace", "return", "var", "void", "while")

// isCELIdentifier: CEL's IDENT minus its reserved words.
func isCELIdentifier(name string) bool {
	return celIdent.MatchString(name) && !celReserved.Has(name)
}

func validateSubdomain(name string) []string {
	return utilvalidation.IsDNS1123Subdomain(name)
}

// validateParamKind: apiVersion "group/version" or "version" with the
// APIService rules for each part, and a kind.
func validateParamKind(pk *admissionregistrationv1.ParamKind, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if pk.APIVersion == "" {
		errs = append(errs, field.Required(p.Child("apiVersion"), ""))
	} else if gv, err := schema.ParseGroupVersion(pk.APIVersion); err != nil {
		errs = append(errs, field.Invalid(p.Child("apiVersion"), pk.APIVersion, err.Error()))
	} else {
		if gv.Group != "" {
			if msgs := utilvalidation.IsDNS1123Subdomain(gv.Group); len(msgs) > 0 {
				errs = append(errs, field.Invalid(p.Child("apiVersion"), gv.Group, strings.Join(msgs, ",")))
			}
		}
		if gv.Version == "" {
			errs = append(errs, field.Invalid(p.Child("apiVersion"), pk.APIVersion, "version must be specified"))
		} else if msgs := utilvalidation.IsDNS1035Label(gv.Version); len(msgs) > 0 {
			errs = append(errs, field.Invalid(p.Child("apiVersion"), gv.Version, strings.Join(msgs, ",")))
		}
	}
	if pk.Kind == "" {
		errs = append(errs, field.Required(p.Child("kind"), ""))
	} else if msgs := utilvalidation.IsDNS1035Label(strings.ToLower(pk.Kind)); len(msgs) > 0 {
		errs = append(errs, field.Invalid(p.Child("kind"), pk.Kind, "may have mixed case, but should otherwise match: "+strings.Join(msgs, ",")))
	}
	return errs
}

// validateParamRef: a name or a selector (not both) and a
// parameterNotFoundAction of Allow or Deny.
func validateParamRef(pr *admissionregistrationv1.ParamRef, p *field.Path) field.ErrorList {
	if pr == nil {
		return nil
	}
	var errs field.ErrorList
	if pr.Name != "" {
		for _, msg := range pathSegmentName(pr.Name) {
			errs = append(errs, field.Invalid(p.Child("name"), pr.Name, msg))
		}
		if pr.Selector != nil {
			errs = append(errs, field.Forbidden(p.Child("name"), "name and selector are mutually exclusive"))
		}
	}
	if pr.Selector != nil {
		errs = append(errs, metav1validation.ValidateLabelSelector(pr.Selector, metav1validation.LabelSelectorValidationOptions{}, p.Child("selector"))...)
		if pr.Name != "" {
			errs = append(errs, field.Forbidden(p.Child("selector"), "name and selector are mutually exclusive"))
		}
	}
	if pr.Name == "" && pr.Selector == nil {
		errs = append(errs, field.Required(p, "one of name or selector must be specified"))
	}
	switch a := pr.ParameterNotFoundAction; {
	case a == nil || *a == "":
		errs = append(errs, field.Required(p.Child("parameterNotFoundAction"), ""))
	case *a != admissionregistrationv1.DenyAction && *a != admissionregistrationv1.AllowAction:
		errs = append(errs, field.NotSupported(p.Child("parameterNotFoundAction"), *a, []string{"Deny", "Allow"}))
	}
	return errs
}

// pathSegmentName: a name that can be a URL path segment.
func pathSegmentName(name string) []string {
	if name == "." || name == ".." {
		return []string{fmt.Sprintf("may not be '%s'", name)}
	}
	for _, illegal := range []string{"/", "%"} {
		if strings.Contains(name, illegal) {
			return []string{fmt.Sprintf("may not contain '%s'", illegal)}
		}
	}
	return nil
}
