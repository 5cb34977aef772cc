package admissionregistration

import (
	"slices"
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/sets"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	webhookutil "k8s.io/apiserver/pkg/util/webhook"
	"k8s.io/utils/ptr"

	"github.com/orch/orch/server/admission/celcond"
)

// ValidateMutating checks a MutatingWebhookConfiguration.
func ValidateMutating(c *admissionregistrationv1.MutatingWebhookConfiguration) field.ErrorList {
	var errs field.ErrorList
	names := sets.New[string]()
	for i := range c.Webhooks {
		w := &c.Webhooks[i]
		p := field.NewPath("webhooks").Index(i)
		errs = append(errs, validateCommon(mutatingCommon(w), p, names)...)
		if rp := w.ReinvocationPolicy; rp != nil && *rp != admissionregistrationv1.NeverReinvocationPolicy && *rp != admissionregistrationv1.IfNeededReinvocationPolicy {
			errs = append(errs, field.NotSupported(p.Child("reinvocationPolicy"), *rp, []string{"Never", "IfNeeded"}))
		}
	}
	return errs
}

// ValidateValidating checks a ValidatingWebhookConfiguration.
func ValidateValidating(c *admissionregistrationv1.ValidatingWebhookConfiguration) field.ErrorList {
	var errs field.ErrorList
	names := sets.New[string]()
	for i := range c.Webhooks {
		errs = append(errs, validateCommon(validatingCommon(&c.Webhooks[i]), field.NewPath("webhooks").Index(i), names)...)
	}
	return errs
}

func validateCommon(w common, p *field.Path, names sets.Set[string]) field.ErrorList {
	var errs field.ErrorList
	errs = append(errs, validateName(w.name, p.Child("name"), names)...)
	errs = append(errs, validateClientConfig(w.clientConfig, p.Child("clientConfig"))...)
	for i, r := range w.rules {
		errs = append(errs, validateRule(r, p.Child("rules").Index(i))...)
	}
	if fp := *w.failurePolicy; fp != nil && *fp != admissionregistrationv1.Fail && *fp != admissionregistrationv1.Ignore {
		errs = append(errs, field.NotSupported(p.Child("failurePolicy"), *fp, []string{"Fail", "Ignore"}))
	}
	if mp := *w.matchPolicy; mp != nil && *mp != admissionregistrationv1.Exact && *mp != admissionregistrationv1.Equivalent {
		errs = append(errs, field.NotSupported(p.Child("matchPolicy"), *mp, []string{"Exact", "Equivalent"}))
	}
	switch {
	case w.sideEffects == nil:
		errs = append(errs, field.Required(p.Child("sideEffects"), "must specify one of None, NoneOnDryRun"))
	case *w.sideEffects != admissionregistrationv1.SideEffectClassNone && *w.sideEffects != admissionregistrationv1.SideEffectClassNoneOnDryRun:
		errs = append(errs, field.NotSupported(p.Child("sideEffects"), *w.sideEffects, []string{"None", "NoneOnDryRun"}))
	}
	if t := *w.timeoutSeconds; t != nil && (*t < 1 || *t > 30) {
		errs = append(errs, field.Invalid(p.Child("timeoutSeconds"), *t, "the timeout value must be between 1 and 30 seconds"))
	}
	errs = append(errs, validateReviewVersions(w.admissionReviewVersions, p.Child("admissionReviewVersions"))...)
	for _, sel := range []struct {
		s    **metav1.LabelSelector
		name string
	}{{w.namespaceSelector, "namespaceSelector"}, {w.objectSelector, "objectSelector"}} {
		if *sel.s != nil {
			errs = append(errs, metav1validation.ValidateLabelSelector(*sel.s, metav1validation.LabelSelectorValidationOptions{}, p.Child(sel.name))...)
		}
	}
	return append(errs, validateMatchConditions(w.matchConditions, p.Child("matchConditions"))...)
}

// validateMatchConditions: at most 64, unique qualified names, and CEL
// expressions that compile.
func validateMatchConditions(conds []admissionregistrationv1.MatchCondition, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if len(conds) > 64 {
		errs = append(errs, field.TooMany(p, len(conds), 64))
	}
	names := sets.New[string]()
	for i, mc := range conds {
		mp := p.Index(i)
		switch {
		case mc.Name == "":
			errs = append(errs, field.Required(mp.Child("name"), ""))
		case names.Has(mc.Name):
			errs = append(errs, field.Duplicate(mp.Child("name"), mc.Name))
		default:
			for _, msg := range utilvalidation.IsQualifiedName(mc.Name) {
				errs = append(errs, field.Invalid(mp.Child("name"), mc.Name, msg))
			}
		}
		names.Insert(mc.Name)
		if strings.TrimSpace(mc.Expression) == "" {
			errs = append(errs, field.Required(mp.Child("expression"), ""))
		}
	}
	return append(errs, celcond.Validate(conds, p)...)
}

func validateName(name string, p *field.Path, seen sets.Set[string]) field.ErrorList {
	var errs field.ErrorList
	if name == "" {
		return field.ErrorList{field.Required(p, "")}
	}
	for _, msg := range utilvalidation.IsDNS1123Subdomain(name) {
		errs = append(errs, field.Invalid(p, name, msg))
	}
	if len(strings.Split(name, ".")) < 3 {
		errs = append(errs, field.Invalid(p, name, "should be a domain with at least three segments separated by dots"))
	}
	if seen.Has(name) {
		errs = append(errs, field.Duplicate(p, name))
	}
	seen.Insert(name)
	return errs
}

// validateClientConfig: exactly one of url and service, checked by
// k8s.io/apiserver's webhook validation (an https URL without user, query
// or fragment; a service name, namespace, port and DNS-subdomain path
// segments).
func validateClientConfig(c *admissionregistrationv1.WebhookClientConfig, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	switch {
	case (c.URL == nil) == (c.Service == nil):
		errs = append(errs, field.Required(p, "exactly one of url or service is required"))
	case c.URL != nil:
		errs = append(errs, webhookutil.ValidateWebhookURL(p.Child("url"), *c.URL, true)...)
	default:
		s := c.Service
		errs = append(errs, webhookutil.ValidateWebhookService(p.Child("service"), s.Namespace, s.Name, s.Path, ptr.Deref(s.Port, 443))...)
	}
	return errs
}

var operations = []string{"*", "CREATE", "UPDATE", "DELETE", "CONNECT"}

func validateRule(r admissionregistrationv1.RuleWithOperations, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if len(r.Operations) == 0 {
		errs = append(errs, field.Required(p.Child("operations"), ""))
	}
	if len(r.Operations) > 1 && slices.Contains(r.Operations, admissionregistrationv1.OperationAll) {
		errs = append(errs, field.Invalid(p.Child("operations"), r.Operations, "if '*' is present, must not specify other operations"))
	}
	for i, op := range r.Operations {
		if !sets.New(operations...).Has(string(op)) {
			errs = append(errs, field.NotSupported(p.Child("operations").Index(i), op, operations))
		}
	}
	for _, part := range []struct {
		v    []string
		name string
	}{{r.APIGroups, "apiGroups"}, {r.APIVersions, "apiVersions"}, {r.Resources, "resources"}} {
		if len(part.v) == 0 {
			errs = append(errs, field.Required(p.Child(part.name), ""))
		}
	}
	for i, res := range r.Resources {
		if res == "" || strings.Count(res, "/") > 1 {
			errs = append(errs, field.Invalid(p.Child("resources").Index(i), res, "must be a resource, resource/subresource, or */*"))
		}
	}
	if s := r.Scope; s != nil && *s != admissionregistrationv1.ClusterScope && *s != admissionregistrationv1.NamespacedScope && *s != admissionregistrationv1.AllScopes {
		errs = append(errs, field.NotSupported(p.Child("scope"), *s, []string{"Cluster", "Namespaced", "*"}))
	}
	return errs
}

func validateReviewVersions(vs []string, p *field.Path) field.ErrorList {
	if len(vs) == 0 {
		return field.ErrorList{field.Required(p, "must specify one of v1, v1beta1")}
	}
	for _, v := range vs {
		if v == "v1" || v == "v1beta1" {
			return nil
		}
	}
	return field.ErrorList{field.Invalid(p, vs, "must include at least one of v1, v1beta1")}
}
