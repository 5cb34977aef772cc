package autoscaling

import (
	"slices"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
)

// Upstream's behavior limits (pkg/apis/autoscaling/validation).
const (
	maxPeriodSeconds              = 1800
	maxStabilizationWindowSeconds = 3600
)

// DefaultBehavior fills the unset fields of a given spec.behavior as
// upstream's SetDefaults_HorizontalPodAutoscalerBehavior does: scale-up
// window 0 with max(4 pods, 100 %) per 15 s, scale-down 100 % per 15 s (its
// window stays unset: the controller's --horizontal-pod-autoscaler-downscale-stabilization
// applies), selectPolicy Max.
func DefaultBehavior(h *autoscalingv2.HorizontalPodAutoscaler) {
	b := h.Spec.Behavior
	if b == nil {
		return
	}
	b.ScaleUp = fillRules(b.ScaleUp, autoscalingv2.HPAScalingRules{StabilizationWindowSeconds: ptr.To(int32(0)),
		Policies: []autoscalingv2.HPAScalingPolicy{{Type: autoscalingv2.PodsScalingPolicy, Value: 4, PeriodSeconds: 15},
			{Type: autoscalingv2.PercentScalingPolicy, Value: 100, PeriodSeconds: 15}}})
	b.ScaleDown = fillRules(b.ScaleDown, autoscalingv2.HPAScalingRules{
		Policies: []autoscalingv2.HPAScalingPolicy{{Type: autoscalingv2.PercentScalingPolicy, Value: 100, PeriodSeconds: 15}}})
}

func fillRules(from *autoscalingv2.HPAScalingRules, def autoscalingv2.HPAScalingRules) *autoscalingv2.HPAScalingRules {
	def.SelectPolicy = ptr.To(autoscalingv2.MaxChangePolicySelect)
	if from == nil {
		return &def
	}
	if from.SelectPolicy != nil {
		def.SelectPolicy = from.SelectPolicy
	}
	if from.StabilizationWindowSeconds != nil {
		def.StabilizationWindowSeconds = from.StabilizationWindowSeconds
	}
	if from.Policies != nil {
		def.Policies = from.Policies
	}
	if from.Tolerance != nil {
		def.Tolerance = from.Tolerance
	}
	return &def
}

// validateBehavior checks spec.behavior as upstream does.
func validateBehavior(b *autoscalingv2.HorizontalPodAutoscalerBehavior, p *field.Path) field.ErrorList {
	if b == nil {
		return nil
	}
	errs := validateRules(b.ScaleUp, p.Child("scaleUp"))
	return append(errs, validateRules(b.ScaleDown, p.Child("scaleDown"))...)
}

var selectPolicies = []string{string(autoscalingv2.MaxChangePolicySelect), string(autoscalingv2.MinChangePolicySelect),
	string(autoscalingv2.DisabledPolicySelect)}

func validateRules(r *autoscalingv2.HPAScalingRules, p *field.Path) field.ErrorList {
	if r == nil {
		return nil
	}
	var errs field.ErrorList
	if w := r.StabilizationWindowSeconds; w != nil && (*w < 0 || *w > maxStabilizationWindowSeconds) {
		errs = append(errs, field.Invalid(p.Child("stabilizationWindowSeconds"), *w, "must be between 0 and 3600"))
	}
	if s := r.SelectPolicy; s != nil && !slices.Contains(selectPolicies, string(*s)) {
		errs = append(errs, field.NotSupported(p.Child("selectPolicy"), *s, selectPolicies))
	}
	if r.SelectPolicy != nil && *r.SelectPolicy == autoscalingv2.DisabledPolicySelect {
		return errs
	}
	if len(r.Policies) == 0 {
		errs = append(errs, field.Required(p.Child("policies"), "must specify at least one Policy"))
	}
	for i, pol := range r.Policies {
		pp := p.Child("policies").Index(i)
		if pol.Type != autoscalingv2.PodsScalingPolicy && pol.Type != autoscalingv2.PercentScalingPolicy {
			errs = append(errs, field.NotSupported(pp.Child("type"), pol.Type, []string{"Pods", "Percent"}))
		}
		if pol.Value <= 0 {
			errs = append(errs, field.Invalid(pp.Child("value"), pol.Value, "must be greater than zero"))
		}
		if pol.PeriodSeconds <= 0 || pol.PeriodSeconds > maxPeriodSeconds {
			errs = append(errs, field.Invalid(pp.Child("periodSeconds"), pol.PeriodSeconds, "must be between 1 and 1800"))
		}
	}
	return errs
}
