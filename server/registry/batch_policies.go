package registry

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
)

// Limits of pkg/apis/batch/validation.
const (
	maxParallelismForIndexedJob  = 100_000
	maxFailedIndexesForIndexed   = 100_000
	completionsSoftLimit         = 100_000
	parallelismLimitHighCompl    = 10_000
	maxFailedIndexesLimitHighCpl = 10_000
	maxPodFailurePolicyRules     = 20
	maxOnExitCodesValues         = 255
	maxOnPodConditionsPatterns   = 20
	maxSuccessPolicyRules        = 20
	maxSucceededIndexesLength    = 64 * 1024
	maxManagedByLength           = 63
)

var (
	podFailurePolicyActions = []batchv1.PodFailurePolicyAction{batchv1.PodFailurePolicyActionCount,
		batchv1.PodFailurePolicyActionFailIndex, batchv1.PodFailurePolicyActionFailJob, batchv1.PodFailurePolicyActionIgnore}
	onExitCodesOperators = []batchv1.PodFailurePolicyOnExitCodesOperator{batchv1.PodFailurePolicyOnExitCodesOpIn,
		batchv1.PodFailurePolicyOnExitCodesOpNotIn}
	conditionStatuses = []corev1.ConditionStatus{corev1.ConditionFalse, corev1.ConditionTrue, corev1.ConditionUnknown}
)

// defaultPodFailurePolicy is SetDefaults_PodFailurePolicyOnPodConditionsPattern:
// a pattern without status matches True.
func defaultPodFailurePolicy(p *batchv1.PodFailurePolicy) {
	if p == nil {
		return
	}
	for i := range p.Rules {
		for j := range p.Rules[i].OnPodConditions {
			if pat := &p.Rules[i].OnPodConditions[j]; pat.Status == "" {
				pat.Status = corev1.ConditionTrue
			}
		}
	}
}

// validateJobIndexing checks backoffLimitPerIndex, maxFailedIndexes and
// the Indexed-only limits, as upstream's validateJobSpec.
func validateJobIndexing(s *batchv1.JobSpec, p *field.Path) field.ErrorList {
	errs := nonNegative32(s.MaxFailedIndexes, p.Child("maxFailedIndexes"))
	if s.MaxFailedIndexes != nil && s.BackoffLimitPerIndex == nil {
		errs = append(errs, field.Required(p.Child("backoffLimitPerIndex"), "when maxFailedIndexes is specified"))
	}
	if ptr.Deref(s.CompletionMode, batchv1.NonIndexedCompletion) != batchv1.IndexedCompletion {
		if s.BackoffLimitPerIndex != nil {
			errs = append(errs, field.Invalid(p.Child("backoffLimitPerIndex"), *s.BackoffLimitPerIndex, "requires indexed completion mode"))
		}
		if s.MaxFailedIndexes != nil {
			errs = append(errs, field.Invalid(p.Child("maxFailedIndexes"), *s.MaxFailedIndexes, "requires indexed completion mode"))
		}
		return errs
	}
	if par := ptr.Deref(s.Parallelism, 0); par > maxParallelismForIndexedJob {
		errs = append(errs, field.Invalid(p.Child("parallelism"), par, fmt.Sprintf("must be less than or equal to %d when completion mode is Indexed", maxParallelismForIndexedJob)))
	}
	if m := s.MaxFailedIndexes; m != nil {
		if s.Completions != nil && *m > *s.Completions {
			errs = append(errs, field.Invalid(p.Child("maxFailedIndexes"), *m, "must be less than or equal to completions"))
		}
		if *m > maxFailedIndexesForIndexed {
			errs = append(errs, field.Invalid(p.Child("maxFailedIndexes"), *m, fmt.Sprintf("must be less than or equal to %d", maxFailedIndexesForIndexed)))
		}
	}
	if s.Completions != nil && *s.Completions > completionsSoftLimit && s.BackoffLimitPerIndex != nil {
		const high = "when completions are above %d and used with backoff limit per index"
		if s.MaxFailedIndexes == nil {
			errs = append(errs, field.Required(p.Child("maxFailedIndexes"), fmt.Sprintf("must be specified when completions is above %d", completionsSoftLimit)))
		} else if *s.MaxFailedIndexes > maxFailedIndexesLimitHighCpl {
			errs = append(errs, field.Invalid(p.Child("maxFailedIndexes"), *s.MaxFailedIndexes, fmt.Sprintf("must be less than or equal to %d "+high, maxFailedIndexesLimitHighCpl, completionsSoftLimit)))
		}
		if par := ptr.Deref(s.Parallelism, 0); par > parallelismLimitHighCompl {
			errs = append(errs, field.Invalid(p.Child("parallelism"), par, fmt.Sprintf("must be less than or equal to %d "+high, parallelismLimitHighCompl, completionsSoftLimit)))
		}
	}
	return errs
}

// validateJobPolicies checks podFailurePolicy, successPolicy, managedBy and
// podReplacementPolicy together with the restart policy they need.
func validateJobPolicies(s *batchv1.JobSpec, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if s.PodFailurePolicy != nil {
		errs = append(errs, validatePodFailurePolicy(s, p.Child("podFailurePolicy"))...)
		if rp := s.Template.Spec.RestartPolicy; rp == corev1.RestartPolicyOnFailure {
			errs = append(errs, field.Invalid(p.Child("template", "spec", "restartPolicy"), rp, `only "Never" is supported when podFailurePolicy is specified`))
		}
	}
	if s.SuccessPolicy != nil {
		if ptr.Deref(s.CompletionMode, batchv1.NonIndexedCompletion) != batchv1.IndexedCompletion {
			errs = append(errs, field.Invalid(p.Child("successPolicy"), *s.SuccessPolicy, "requires indexed completion mode"))
		} else {
			errs = append(errs, validateSuccessPolicy(s, p.Child("successPolicy"))...)
		}
	}
	if m := s.ManagedBy; m != nil {
		errs = append(errs, validation.IsDomainPrefixedPath(p.Child("managedBy"), *m)...)
		if len(*m) > maxManagedByLength {
			errs = append(errs, field.TooLong(p.Child("managedBy"), "", maxManagedByLength))
		}
	}
	if r := s.PodReplacementPolicy; r != nil {
		if s.PodFailurePolicy != nil {
			errs = append(errs, oneOf(*r, p.Child("podReplacementPolicy"), batchv1.Failed)...)
		} else {
			errs = append(errs, oneOf(*r, p.Child("podReplacementPolicy"), batchv1.TerminatingOrFailed, batchv1.Failed)...)
		}
	}
	return errs
}

func validatePodFailurePolicy(s *batchv1.JobSpec, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	rules := p.Child("rules")
	if n := len(s.PodFailurePolicy.Rules); n > maxPodFailurePolicyRules {
		errs = append(errs, field.TooMany(rules, n, maxPodFailurePolicyRules))
	}
	names := sets.New[string]()
	for _, c := range s.Template.Spec.Containers {
		names.Insert(c.Name)
	}
	for _, c := range s.Template.Spec.InitContainers {
		names.Insert(c.Name)
	}
	for i := range s.PodFailurePolicy.Rules {
		errs = append(errs, validatePodFailurePolicyRule(s, &s.PodFailurePolicy.Rules[i], rules.Index(i), names)...)
	}
	return errs
}

func validatePodFailurePolicyRule(s *batchv1.JobSpec, r *batchv1.PodFailurePolicyRule, p *field.Path, names sets.Set[string]) field.ErrorList {
	var errs field.ErrorList
	switch {
	case r.Action == batchv1.PodFailurePolicyActionFailIndex && s.BackoffLimitPerIndex == nil:
		errs = append(errs, field.Invalid(p.Child("action"), r.Action, "requires the backoffLimitPerIndex to be set"))
	default:
		errs = append(errs, oneOf(r.Action, p.Child("action"), podFailurePolicyActions...)...)
	}
	if r.OnExitCodes != nil {
		errs = append(errs, validateOnExitCodes(r.OnExitCodes, p.Child("onExitCodes"), names)...)
	}
	if len(r.OnPodConditions) > 0 {
		errs = append(errs, validateOnPodConditions(r.OnPodConditions, p.Child("onPodConditions"))...)
	}
	if r.OnExitCodes != nil && len(r.OnPodConditions) > 0 {
		errs = append(errs, field.Invalid(p, field.OmitValueType{}, "specifying both OnExitCodes and OnPodConditions is not supported"))
	}
	if r.OnExitCodes == nil && len(r.OnPodConditions) == 0 {
		errs = append(errs, field.Invalid(p, field.OmitValueType{}, "specifying one of OnExitCodes and OnPodConditions is required"))
	}
	return errs
}

func validateOnExitCodes(r *batchv1.PodFailurePolicyOnExitCodesRequirement, p *field.Path, names sets.Set[string]) field.ErrorList {
	errs := oneOf(r.Operator, p.Child("operator"), onExitCodesOperators...)
	if r.ContainerName != nil && !names.Has(*r.ContainerName) {
		errs = append(errs, field.Invalid(p.Child("containerName"), *r.ContainerName, "must be one of the container or initContainer names in the pod template"))
	}
	values := p.Child("values")
	if len(r.Values) == 0 {
		errs = append(errs, field.Invalid(values, r.Values, "at least one value is required"))
	} else if len(r.Values) > maxOnExitCodesValues {
		errs = append(errs, field.TooMany(values, len(r.Values), maxOnExitCodesValues))
	}
	seen := sets.New[int32]()
	for j, v := range r.Values {
		if r.Operator == batchv1.PodFailurePolicyOnExitCodesOpIn && v == 0 {
			errs = append(errs, field.Invalid(values.Index(j), v, "must not be 0 for the In operator"))
		}
		if seen.Has(v) {
			errs = append(errs, field.Duplicate(values.Index(j), v))
		}
		seen.Insert(v)
	}
	if !slices.IsSorted(r.Values) {
		errs = append(errs, field.Invalid(values, r.Values, "must be ordered"))
	}
	return errs
}

func validateOnPodConditions(pats []batchv1.PodFailurePolicyOnPodConditionsPattern, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if len(pats) > maxOnPodConditionsPatterns {
		errs = append(errs, field.TooMany(p, len(pats), maxOnPodConditionsPatterns))
	}
	for j, pat := range pats {
		errs = append(errs, msgs(string(pat.Type), p.Index(j).Child("type"), validation.IsQualifiedName(string(pat.Type)))...)
		errs = append(errs, oneOf(pat.Status, p.Index(j).Child("status"), conditionStatuses...)...)
	}
	return errs
}

func validateSuccessPolicy(s *batchv1.JobSpec, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	rules := p.Child("rules")
	switch n := len(s.SuccessPolicy.Rules); {
	case n == 0:
		errs = append(errs, field.Required(rules, "at least one rules must be specified when the successPolicy is specified"))
	case n > maxSuccessPolicyRules:
		errs = append(errs, field.TooMany(rules, n, maxSuccessPolicyRules))
	}
	completions := ptr.Deref(s.Completions, 0)
	for i, r := range s.SuccessPolicy.Rules {
		rp := rules.Index(i)
		if r.SucceededCount == nil && r.SucceededIndexes == nil {
			errs = append(errs, field.Required(rp, "at least one of succeededCount or succeededIndexes must be specified"))
		}
		var total int32
		if r.SucceededIndexes != nil {
			ip := rp.Child("succeededIndexes")
			if len(*r.SucceededIndexes) > maxSucceededIndexesLength {
				errs = append(errs, field.TooLong(ip, "", maxSucceededIndexesLength))
			}
			var err error
			if total, err = validateIndexesFormat(*r.SucceededIndexes, completions); err != nil {
				errs = append(errs, field.Invalid(ip, *r.SucceededIndexes, "error parsing succeededIndexes: "+err.Error()))
			}
		}
		if c := r.SucceededCount; c != nil {
			cp := rp.Child("succeededCount")
			errs = append(errs, nonNegative32(c, cp)...)
			if *c > completions {
				errs = append(errs, field.Invalid(cp, *c, fmt.Sprintf("must be less than or equal to %d (the number of specified completions)", completions)))
			}
			if r.SucceededIndexes != nil && *c > total {
				errs = append(errs, field.Invalid(cp, *c, fmt.Sprintf("must be less than or equal to %d (the number of indexes in the specified succeededIndexes field)", total)))
			}
		}
	}
	return errs
}

// validateIndexesFormat checks an index list ("1,3-5") below completions,
// strictly increasing, and returns how many indexes it names.
func validateIndexesFormat(s string, completions int32) (int32, error) {
	if s == "" {
		return 0, nil
	}
	var total int32
	last := int32(-1)
	for _, part := range strings.Split(s, ",") {
		x, y, err := parseIndexInterval(part, completions)
		if err != nil {
			return 0, err
		}
		if last >= x {
			return 0, fmt.Errorf("non-increasing order, previous: %d, current: %d", last, x)
		}
		total += y - x + 1
		last = y
	}
	return total, nil
}

func parseIndexInterval(s string, completions int32) (int32, int32, error) {
	parts := strings.Split(s, "-")
	if len(parts) > 2 {
		return 0, 0, fmt.Errorf("the fragment %q violates the requirement that an index interval can have at most two parts separated by '-'", s)
	}
	bounds := make([]int32, len(parts))
	for i, p := range parts {
		v, err := strconv.Atoi(p)
		if err != nil {
			return 0, 0, fmt.Errorf("cannot convert string to integer for index: %q", p)
		}
		if v >= int(completions) {
			return 0, 0, fmt.Errorf("too large index: %q", p)
		}
		bounds[i] = int32(v)
	}
	if len(bounds) == 1 {
		return bounds[0], bounds[0], nil
	}
	if bounds[0] >= bounds[1] {
		return 0, 0, fmt.Errorf("non-increasing order, previous: %d, current: %d", bounds[0], bounds[1])
	}
	return bounds[0], bounds[1], nil
}
