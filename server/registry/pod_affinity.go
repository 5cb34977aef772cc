package registry

import (
	corev1 "k8s.io/api/core/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// validateAffinity checks node affinity requirements and the label selectors
// of pod (anti-)affinity terms, the parts the scheduler relies on.
func validateAffinity(a *corev1.Affinity, p *field.Path) field.ErrorList {
	if a == nil {
		return nil
	}
	var errs field.ErrorList
	if na := a.NodeAffinity; na != nil {
		np := p.Child("nodeAffinity")
		if req := na.RequiredDuringSchedulingIgnoredDuringExecution; req != nil {
			rp := np.Child("requiredDuringSchedulingIgnoredDuringExecution")
			if len(req.NodeSelectorTerms) == 0 {
				errs = append(errs, field.Required(rp.Child("nodeSelectorTerms"), "must have at least one node selector term"))
			}
			for i, term := range req.NodeSelectorTerms {
				errs = append(errs, validateNodeSelectorTerm(term, rp.Child("nodeSelectorTerms").Index(i))...)
			}
		}
		for i, pt := range na.PreferredDuringSchedulingIgnoredDuringExecution {
			pp := np.Child("preferredDuringSchedulingIgnoredDuringExecution").Index(i)
			if pt.Weight < 1 || pt.Weight > 100 {
				errs = append(errs, field.Invalid(pp.Child("weight"), pt.Weight, "must be in the range 1-100"))
			}
			errs = append(errs, validateNodeSelectorTerm(pt.Preference, pp.Child("preference"))...)
		}
	}
	if pa := a.PodAffinity; pa != nil {
		errs = append(errs, validatePodAffinityTerms(pa.RequiredDuringSchedulingIgnoredDuringExecution, pa.PreferredDuringSchedulingIgnoredDuringExecution, p.Child("podAffinity"))...)
	}
	if pa := a.PodAntiAffinity; pa != nil {
		errs = append(errs, validatePodAffinityTerms(pa.RequiredDuringSchedulingIgnoredDuringExecution, pa.PreferredDuringSchedulingIgnoredDuringExecution, p.Child("podAntiAffinity"))...)
	}
	return errs
}

func validateNodeSelectorTerm(term corev1.NodeSelectorTerm, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, rq := range term.MatchExpressions {
		errs = append(errs, validateNodeSelectorRequirement(rq, p.Child("matchExpressions").Index(i))...)
	}
	for i, rq := range term.MatchFields {
		fp := p.Child("matchFields").Index(i)
		if rq.Key != "metadata.name" {
			errs = append(errs, field.Invalid(fp.Child("key"), rq.Key, "not a valid field selector key"))
		}
		if (rq.Operator != corev1.NodeSelectorOpIn && rq.Operator != corev1.NodeSelectorOpNotIn) || len(rq.Values) != 1 {
			errs = append(errs, field.Invalid(fp, rq, "must be 'In' or 'NotIn' with exactly one value"))
		}
	}
	return errs
}

// validateNodeSelectorRequirement ports ValidateNodeSelectorRequirement.
func validateNodeSelectorRequirement(rq corev1.NodeSelectorRequirement, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	switch rq.Operator {
	case corev1.NodeSelectorOpIn, corev1.NodeSelectorOpNotIn:
		if len(rq.Values) == 0 {
			errs = append(errs, field.Required(p.Child("values"), "must be specified when `operator` is 'In' or 'NotIn'"))
		}
	case corev1.NodeSelectorOpExists, corev1.NodeSelectorOpDoesNotExist:
		if len(rq.Values) > 0 {
			errs = append(errs, field.Forbidden(p.Child("values"), "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"))
		}
	case corev1.NodeSelectorOpGt, corev1.NodeSelectorOpLt:
		if len(rq.Values) != 1 {
			errs = append(errs, field.Required(p.Child("values"), "must be specified single value when `operator` is 'Lt' or 'Gt'"))
		}
	default:
		errs = append(errs, field.Invalid(p.Child("operator"), rq.Operator, "not a valid selector operator"))
	}
	errs = append(errs, metav1validation.ValidateLabelName(rq.Key, p.Child("key"))...)
	for i, v := range rq.Values {
		errs = append(errs, msgs(v, p.Child("values").Index(i), validation.IsValidLabelValue(v))...)
	}
	return errs
}

func validatePodAffinityTerms(req []corev1.PodAffinityTerm, pref []corev1.WeightedPodAffinityTerm, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	term := func(t corev1.PodAffinityTerm, tp *field.Path) {
		if t.TopologyKey == "" {
			errs = append(errs, field.Required(tp.Child("topologyKey"), "can not be empty"))
		} else {
			errs = append(errs, metav1validation.ValidateLabelName(t.TopologyKey, tp.Child("topologyKey"))...)
		}
		opts := metav1validation.LabelSelectorValidationOptions{}
		if t.LabelSelector != nil {
			errs = append(errs, metav1validation.ValidateLabelSelector(t.LabelSelector, opts, tp.Child("labelSelector"))...)
		}
		if t.NamespaceSelector != nil {
			errs = append(errs, metav1validation.ValidateLabelSelector(t.NamespaceSelector, opts, tp.Child("namespaceSelector"))...)
		}
	}
	for i, t := range req {
		term(t, p.Child("requiredDuringSchedulingIgnoredDuringExecution").Index(i))
	}
	for i, w := range pref {
		wp := p.Child("preferredDuringSchedulingIgnoredDuringExecution").Index(i)
		if w.Weight < 1 || w.Weight > 100 {
			errs = append(errs, field.Invalid(wp.Child("weight"), w.Weight, "must be in the range 1-100"))
		}
		term(w.PodAffinityTerm, wp.Child("podAffinityTerm"))
	}
	return errs
}

// validateTopologySpread checks the fields the scheduler needs of each constraint.
func validateTopologySpread(cs []corev1.TopologySpreadConstraint, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, c := range cs {
		cp := p.Index(i)
		if c.MaxSkew <= 0 {
			errs = append(errs, field.Invalid(cp.Child("maxSkew"), c.MaxSkew, "must be greater than zero"))
		}
		if c.TopologyKey == "" {
			errs = append(errs, field.Required(cp.Child("topologyKey"), "can not be empty"))
		} else {
			errs = append(errs, metav1validation.ValidateLabelName(c.TopologyKey, cp.Child("topologyKey"))...)
		}
		errs = append(errs, oneOf(c.WhenUnsatisfiable, cp.Child("whenUnsatisfiable"), corev1.DoNotSchedule, corev1.ScheduleAnyway)...)
		if c.MinDomains != nil && *c.MinDomains <= 0 {
			errs = append(errs, field.Invalid(cp.Child("minDomains"), *c.MinDomains, "must be greater than 0"))
		}
	}
	return errs
}
