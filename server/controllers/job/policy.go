package job

import (
	"fmt"
	"slices"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
)

// policyMatch is what spec.podFailurePolicy says about one failed pod
// (upstream's matchPodFailurePolicy).
type policyMatch struct {
	// action of the first matching rule; "" when no rule matched.
	action batchv1.PodFailurePolicyAction
	// counts: the failure counts toward backoffLimit and backoffLimitPerIndex
	// (false only for Ignore).
	counts bool
	// failJob is the Job's failure message when the action is FailJob.
	failJob string
}

// matchPodFailurePolicy checks a failed pod against the rules in order; the
// first rule whose exit codes or pod conditions match decides.
func matchPodFailurePolicy(policy *batchv1.PodFailurePolicy, pod *corev1.Pod) policyMatch {
	if policy == nil {
		return policyMatch{counts: true}
	}
	for i, rule := range policy.Rules {
		var msg string
		switch {
		case rule.OnExitCodes != nil:
			cs := matchOnExitCodes(&pod.Status, rule.OnExitCodes)
			if cs == nil {
				continue
			}
			msg = fmt.Sprintf("Container %s for pod %s/%s failed with exit code %v matching %v rule at index %d",
				cs.Name, pod.Namespace, pod.Name, cs.State.Terminated.ExitCode, rule.Action, i)
		case rule.OnPodConditions != nil:
			cond := matchOnPodConditions(&pod.Status, rule.OnPodConditions)
			if cond == nil {
				continue
			}
			msg = fmt.Sprintf("Pod %s/%s has condition %v matching %v rule at index %d",
				pod.Namespace, pod.Name, cond.Type, rule.Action, i)
		default:
			continue
		}
		switch rule.Action {
		case batchv1.PodFailurePolicyActionIgnore:
			return policyMatch{action: rule.Action}
		case batchv1.PodFailurePolicyActionFailJob:
			return policyMatch{action: rule.Action, counts: true, failJob: msg}
		case batchv1.PodFailurePolicyActionFailIndex, batchv1.PodFailurePolicyActionCount:
			return policyMatch{action: rule.Action, counts: true}
		}
	}
	return policyMatch{counts: true}
}

// matchOnExitCodes returns the first terminated container (app containers,
// then init containers) whose non-zero exit code satisfies req.
func matchOnExitCodes(st *corev1.PodStatus, req *batchv1.PodFailurePolicyOnExitCodesRequirement) *corev1.ContainerStatus {
	if cs := matchingContainer(st.ContainerStatuses, req); cs != nil {
		return cs
	}
	return matchingContainer(st.InitContainerStatuses, req)
}

func matchingContainer(statuses []corev1.ContainerStatus, req *batchv1.PodFailurePolicyOnExitCodesRequirement) *corev1.ContainerStatus {
	for i := range statuses {
		cs := &statuses[i]
		t := cs.State.Terminated
		if t == nil || t.ExitCode == 0 || (req.ContainerName != nil && *req.ContainerName != cs.Name) {
			continue
		}
		in := slices.Contains(req.Values, t.ExitCode)
		if (req.Operator == batchv1.PodFailurePolicyOnExitCodesOpIn && in) ||
			(req.Operator == batchv1.PodFailurePolicyOnExitCodesOpNotIn && !in) {
			return cs
		}
	}
	return nil
}

func matchOnPodConditions(st *corev1.PodStatus, patterns []batchv1.PodFailurePolicyOnPodConditionsPattern) *corev1.PodCondition {
	for i := range st.Conditions {
		for _, p := range patterns {
			if st.Conditions[i].Type == p.Type && st.Conditions[i].Status == p.Status {
				return &st.Conditions[i]
			}
		}
	}
	return nil
}

// failJobMessage is the message of the first failed pod matching a FailJob
// rule; "" when none does (upstream's getFailJobMessage).
func failJobMessage(j *batchv1.Job, pods []*corev1.Pod) string {
	if j.Spec.PodFailurePolicy == nil {
		return ""
	}
	for _, p := range pods {
		if isPodFailed(p, j) {
			if m := matchPodFailurePolicy(j.Spec.PodFailurePolicy, p); m.failJob != "" {
				return m.failJob
			}
		}
	}
	return ""
}

// failureCounts tells whether a failed pod counts toward the back-off limits.
func failureCounts(j *batchv1.Job, p *corev1.Pod) bool {
	return matchPodFailurePolicy(j.Spec.PodFailurePolicy, p).counts
}
