package registry

import (
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
)

// policyJob is an Indexed Job of 4 completions with mutate applied.
func policyJob(mutate func(*batchv1.JobSpec)) func() runtime.Object {
	return func() runtime.Object {
		tmpl := goodTemplate()
		tmpl.Spec.RestartPolicy = corev1.RestartPolicyNever
		j := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "j"}, Spec: batchv1.JobSpec{
			Completions: ptr.To[int32](4), CompletionMode: ptr.To(batchv1.IndexedCompletion), Template: tmpl}}
		mutate(&j.Spec)
		return j
	}
}

func exitCodes(action batchv1.PodFailurePolicyAction, op batchv1.PodFailurePolicyOnExitCodesOperator, v ...int32) *batchv1.PodFailurePolicy {
	return &batchv1.PodFailurePolicy{Rules: []batchv1.PodFailurePolicyRule{{Action: action,
		OnExitCodes: &batchv1.PodFailurePolicyOnExitCodesRequirement{Operator: op, Values: v}}}}
}

func TestJobPolicyValidation(t *testing.T) {
	in := batchv1.PodFailurePolicyOnExitCodesOpIn
	runValidationCases(t, []validationCase{
		{"failjob on exit code", "batch", "jobs", policyJob(func(s *batchv1.JobSpec) {
			s.PodFailurePolicy = exitCodes(batchv1.PodFailurePolicyActionFailJob, in, 1, 42)
		}), "", ""},
		{"exit code 0 with In", "batch", "jobs", policyJob(func(s *batchv1.JobSpec) {
			s.PodFailurePolicy = exitCodes(batchv1.PodFailurePolicyActionFailJob, in, 0)
		}), field.ErrorTypeInvalid, "spec.podFailurePolicy.rules[0].onExitCodes.values[0]"},
		{"exit codes unordered", "batch", "jobs", policyJob(func(s *batchv1.JobSpec) {
			s.PodFailurePolicy = exitCodes(batchv1.PodFailurePolicyActionIgnore, in, 5, 3)
		}), field.ErrorTypeInvalid, "spec.podFailurePolicy.rules[0].onExitCodes.values"},
		{"unknown action", "batch", "jobs", policyJob(func(s *batchv1.JobSpec) {
			s.PodFailurePolicy = exitCodes("Retry", in, 1)
		}), field.ErrorTypeNotSupported, "spec.podFailurePolicy.rules[0].action"},
		{"FailIndex needs backoffLimitPerIndex", "batch", "jobs", policyJob(func(s *batchv1.JobSpec) {
			s.PodFailurePolicy = exitCodes(batchv1.PodFailurePolicyActionFailIndex, in, 1)
		}), field.ErrorTypeInvalid, "spec.podFailurePolicy.rules[0].action"},
		{"rule without requirement", "batch", "jobs", policyJob(func(s *batchv1.JobSpec) {
			s.PodFailurePolicy = &batchv1.PodFailurePolicy{Rules: []batchv1.PodFailurePolicyRule{{Action: batchv1.PodFailurePolicyActionIgnore}}}
		}), field.ErrorTypeInvalid, "spec.podFailurePolicy.rules[0]"},
		{"unknown container", "batch", "jobs", policyJob(func(s *batchv1.JobSpec) {
			s.PodFailurePolicy = exitCodes(batchv1.PodFailurePolicyActionIgnore, in, 1)
			s.PodFailurePolicy.Rules[0].OnExitCodes.ContainerName = ptr.To("nope")
		}), field.ErrorTypeInvalid, "spec.podFailurePolicy.rules[0].onExitCodes.containerName"},
		{"pod failure policy with OnFailure", "batch", "jobs", policyJob(func(s *batchv1.JobSpec) {
			s.PodFailurePolicy = exitCodes(batchv1.PodFailurePolicyActionIgnore, in, 1)
			s.Template.Spec.RestartPolicy = corev1.RestartPolicyOnFailure
		}), field.ErrorTypeInvalid, "spec.template.spec.restartPolicy"},
		{"pod failure policy with TerminatingOrFailed", "batch", "jobs", policyJob(func(s *batchv1.JobSpec) {
			s.PodFailurePolicy = exitCodes(batchv1.PodFailurePolicyActionIgnore, in, 1)
			s.PodReplacementPolicy = ptr.To(batchv1.TerminatingOrFailed)
		}), field.ErrorTypeNotSupported, "spec.podReplacementPolicy"},
		{"disruption condition pattern", "batch", "jobs", policyJob(func(s *batchv1.JobSpec) {
			s.PodFailurePolicy = &batchv1.PodFailurePolicy{Rules: []batchv1.PodFailurePolicyRule{{Action: batchv1.PodFailurePolicyActionIgnore,
				OnPodConditions: []batchv1.PodFailurePolicyOnPodConditionsPattern{{Type: corev1.DisruptionTarget}}}}}
		}), "", ""},
		{"maxFailedIndexes without per-index limit", "batch", "jobs", policyJob(func(s *batchv1.JobSpec) {
			s.MaxFailedIndexes = ptr.To[int32](1)
		}), field.ErrorTypeRequired, "spec.backoffLimitPerIndex"},
		{"maxFailedIndexes above completions", "batch", "jobs", policyJob(func(s *batchv1.JobSpec) {
			s.BackoffLimitPerIndex, s.MaxFailedIndexes = ptr.To[int32](1), ptr.To[int32](5)
		}), field.ErrorTypeInvalid, "spec.maxFailedIndexes"},
		{"backoffLimitPerIndex NonIndexed", "batch", "jobs", policyJob(func(s *batchv1.JobSpec) {
			s.CompletionMode, s.BackoffLimitPerIndex = ptr.To(batchv1.NonIndexedCompletion), ptr.To[int32](1)
		}), field.ErrorTypeInvalid, "spec.backoffLimitPerIndex"},
		{"success policy ok", "batch", "jobs", policyJob(func(s *batchv1.JobSpec) {
			s.SuccessPolicy = &batchv1.SuccessPolicy{Rules: []batchv1.SuccessPolicyRule{
				{SucceededIndexes: ptr.To("0,2-3"), SucceededCount: ptr.To[int32](2)}, {SucceededCount: ptr.To[int32](4)}}}
		}), "", ""},
		{"success policy index too large", "batch", "jobs", policyJob(func(s *batchv1.JobSpec) {
			s.SuccessPolicy = &batchv1.SuccessPolicy{Rules: []batchv1.SuccessPolicyRule{{SucceededIndexes: ptr.To("1-4")}}}
		}), field.ErrorTypeInvalid, "spec.successPolicy.rules[0].succeededIndexes"},
		{"success policy count above indexes", "batch", "jobs", policyJob(func(s *batchv1.JobSpec) {
			s.SuccessPolicy = &batchv1.SuccessPolicy{Rules: []batchv1.SuccessPolicyRule{{SucceededIndexes: ptr.To("1"), SucceededCount: ptr.To[int32](2)}}}
		}), field.ErrorTypeInvalid, "spec.successPolicy.rules[0].succeededCount"},
		{"success policy empty rule", "batch", "jobs", policyJob(func(s *batchv1.JobSpec) {
			s.SuccessPolicy = &batchv1.SuccessPolicy{Rules: []batchv1.SuccessPolicyRule{{}}}
		}), field.ErrorTypeRequired, "spec.successPolicy.rules[0]"},
		{"managedBy", "batch", "jobs", policyJob(func(s *batchv1.JobSpec) { s.ManagedBy = ptr.To("example.com/custom-job-controller") }), "", ""},
		{"managedBy not a domain path", "batch", "jobs", policyJob(func(s *batchv1.JobSpec) { s.ManagedBy = ptr.To("custom") }),
			field.ErrorTypeInvalid, "spec.managedBy"},
		{"success policy NonIndexed", "batch", "jobs", policyJob(func(s *batchv1.JobSpec) {
			s.CompletionMode = ptr.To(batchv1.NonIndexedCompletion)
			s.SuccessPolicy = &batchv1.SuccessPolicy{Rules: []batchv1.SuccessPolicyRule{{SucceededCount: ptr.To[int32](1)}}}
		}), field.ErrorTypeInvalid, "spec.successPolicy"},
	})
}

func TestJobPolicyDefaults(t *testing.T) {
	j := policyJob(func(s *batchv1.JobSpec) {
		s.PodFailurePolicy = &batchv1.PodFailurePolicy{Rules: []batchv1.PodFailurePolicyRule{{Action: batchv1.PodFailurePolicyActionIgnore,
			OnPodConditions: []batchv1.PodFailurePolicyOnPodConditionsPattern{{Type: corev1.DisruptionTarget}}}}}
		s.BackoffLimitPerIndex = ptr.To[int32](1)
	})().(*batchv1.Job)
	requireNoErr(t, prepareCreate(t, resourceFor(t, "batch", "jobs"), j))
	if got := j.Spec.PodFailurePolicy.Rules[0].OnPodConditions[0].Status; got != corev1.ConditionTrue {
		t.Errorf("onPodConditions status defaulted to %q, want True", got)
	}
	if *j.Spec.PodReplacementPolicy != batchv1.Failed || *j.Spec.BackoffLimit != 1<<31-1 {
		t.Errorf("podReplacementPolicy %v, backoffLimit %d", *j.Spec.PodReplacementPolicy, *j.Spec.BackoffLimit)
	}
}
