package registry

import (
	"strings"

	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// dns1123Label returns Invalid errors for a value that is not a DNS-1123 label.
func dns1123Label(v string, p *field.Path) field.ErrorList {
	return msgs(v, p, validation.IsDNS1123Label(v))
}

func dns1123Subdomain(v string, p *field.Path) field.ErrorList {
	return msgs(v, p, validation.IsDNS1123Subdomain(v))
}

// msgs turns validation messages into Invalid errors at p.
func msgs(v interface{}, p *field.Path, ms []string) field.ErrorList {
	var errs field.ErrorList
	for _, m := range ms {
		errs = append(errs, field.Invalid(p, v, m))
	}
	return errs
}

func nonNegative(v int64, p *field.Path) field.ErrorList {
	return apivalidation.ValidateNonnegativeField(v, p)
}

func nonNegative32(v *int32, p *field.Path) field.ErrorList {
	if v == nil {
		return nil
	}
	return nonNegative(int64(*v), p)
}

func positive(v int64, p *field.Path) field.ErrorList {
	if v <= 0 {
		return field.ErrorList{field.Invalid(p, v, "must be greater than zero")}
	}
	return nil
}

// immutable returns a Forbidden-style "field is immutable" error when a and b differ.
func immutable(newVal, oldVal interface{}, p *field.Path) field.ErrorList {
	return apivalidation.ValidateImmutableField(newVal, oldVal, p)
}

// oneOf checks v against the allowed values, Required when empty.
func oneOf[T ~string](v T, p *field.Path, allowed ...T) field.ErrorList {
	if v == "" {
		return field.ErrorList{field.Required(p, "")}
	}
	for _, a := range allowed {
		if v == a {
			return nil
		}
	}
	vals := make([]string, len(allowed))
	for i, a := range allowed {
		vals[i] = string(a)
	}
	return field.ErrorList{field.NotSupported(p, v, vals)}
}

// validateSelectorMatchesTemplate is the workload rule: a non-empty selector
// that selects the template's labels.
func validateSelectorMatchesTemplate(sel *metav1.LabelSelector, tmplLabels map[string]string, kind string, p *field.Path) field.ErrorList {
	if sel == nil {
		return field.ErrorList{field.Required(p.Child("selector"), "")}
	}
	errs := metav1validation.ValidateLabelSelector(sel, metav1validation.LabelSelectorValidationOptions{}, p.Child("selector"))
	if len(sel.MatchLabels)+len(sel.MatchExpressions) == 0 {
		errs = append(errs, field.Invalid(p.Child("selector"), sel, "empty selector is invalid for "+kind))
	}
	s, err := metav1.LabelSelectorAsSelector(sel)
	if err != nil {
		return errs
	}
	if !s.Matches(labels.Set(tmplLabels)) {
		errs = append(errs, field.Invalid(p.Child("template", "metadata", "labels"), tmplLabels,
			"`selector` does not match template `labels`"))
	}
	return errs
}

// validateLocalDescendingPath rejects absolute paths and ".." elements.
func validateLocalDescendingPath(target string, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if strings.HasPrefix(target, "/") {
		errs = append(errs, field.Invalid(p, target, "must be a relative path"))
	}
	for _, item := range strings.Split(target, "/") {
		if item == ".." {
			errs = append(errs, field.Invalid(p, target, "must not contain '..'"))
			break
		}
	}
	return errs
}

func validatePortNum(port int32, p *field.Path) field.ErrorList {
	return msgs(port, p, validation.IsValidPortNum(int(port)))
}
