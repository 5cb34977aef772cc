package job

import (
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/utils/ptr"
)

// failedPod is a Failed pod whose containers exited with codes (by name
// c0, c1, ...) at finished.
func failedPod(name string, finished time.Time, codes ...int32) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", UID: types.UID("uid-" + name),
		Finalizers: []string{trackingFinalizer}, Annotations: map[string]string{}},
		Status: corev1.PodStatus{Phase: corev1.PodFailed}}
	for i, c := range codes {
		p.Status.ContainerStatuses = append(p.Status.ContainerStatuses, corev1.ContainerStatus{Name: "c" + string(rune('0'+i)),
			State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: c, FinishedAt: metav1.NewTime(finished)}}})
	}
	return p
}

func withCondition(p *corev1.Pod, t corev1.PodConditionType, st corev1.ConditionStatus) *corev1.Pod {
	p.Status.Conditions = append(p.Status.Conditions, corev1.PodCondition{Type: t, Status: st})
	return p
}

func rule(action batchv1.PodFailurePolicyAction, op batchv1.PodFailurePolicyOnExitCodesOperator, codes ...int32) batchv1.PodFailurePolicyRule {
	return batchv1.PodFailurePolicyRule{Action: action, OnExitCodes: &batchv1.PodFailurePolicyOnExitCodesRequirement{Operator: op, Values: codes}}
}

func condRule(action batchv1.PodFailurePolicyAction, t corev1.PodConditionType) batchv1.PodFailurePolicyRule {
	return batchv1.PodFailurePolicyRule{Action: action,
		OnPodConditions: []batchv1.PodFailurePolicyOnPodConditionsPattern{{Type: t, Status: corev1.ConditionTrue}}}
}

func TestMatchPodFailurePolicy(t *testing.T) {
	now := time.Unix(1000, 0)
	in, notIn := batchv1.PodFailurePolicyOnExitCodesOpIn, batchv1.PodFailurePolicyOnExitCodesOpNotIn
	ignore, failJob := batchv1.PodFailurePolicyActionIgnore, batchv1.PodFailurePolicyActionFailJob
	failIndex, count := batchv1.PodFailurePolicyActionFailIndex, batchv1.PodFailurePolicyActionCount
	for _, tc := range []struct {
		name   string
		rules  []batchv1.PodFailurePolicyRule
		pod    *corev1.Pod
		want   batchv1.PodFailurePolicyAction
		counts bool
		msg    string
	}{
		{"no policy counts", nil, failedPod("p", now, 1), "", true, ""},
		{"FailJob on exit code", []batchv1.PodFailurePolicyRule{rule(failJob, in, 1)}, failedPod("p", now, 1), failJob, true,
			"Container c0 for pod ns/p failed with exit code 1 matching FailJob rule at index 0"},
		{"exit code not listed", []batchv1.PodFailurePolicyRule{rule(failJob, in, 2, 3)}, failedPod("p", now, 1), "", true, ""},
		{"NotIn matches others", []batchv1.PodFailurePolicyRule{rule(ignore, notIn, 42)}, failedPod("p", now, 1), ignore, false, ""},
		{"exit 0 never matches", []batchv1.PodFailurePolicyRule{rule(ignore, notIn, 42)}, failedPod("p", now, 0), "", true, ""},
		{"second container matches", []batchv1.PodFailurePolicyRule{rule(count, in, 5)}, failedPod("p", now, 0, 5), count, true, ""},
		{"first matching rule wins", []batchv1.PodFailurePolicyRule{rule(ignore, in, 7), rule(failJob, in, 1), rule(ignore, in, 1)},
			failedPod("p", now, 1), failJob, true, "Container c0 for pod ns/p failed with exit code 1 matching FailJob rule at index 1"},
		{"Ignore on DisruptionTarget", []batchv1.PodFailurePolicyRule{condRule(ignore, corev1.DisruptionTarget)},
			withCondition(failedPod("p", now, 137), corev1.DisruptionTarget, corev1.ConditionTrue), ignore, false, ""},
		{"condition with other status", []batchv1.PodFailurePolicyRule{condRule(ignore, corev1.DisruptionTarget)},
			withCondition(failedPod("p", now, 137), corev1.DisruptionTarget, corev1.ConditionFalse), "", true, ""},
		{"FailJob on condition", []batchv1.PodFailurePolicyRule{condRule(failJob, corev1.DisruptionTarget)},
			withCondition(failedPod("p", now, 137), corev1.DisruptionTarget, corev1.ConditionTrue), failJob, true,
			"Pod ns/p has condition DisruptionTarget matching FailJob rule at index 0"},
		{"FailIndex counts", []batchv1.PodFailurePolicyRule{rule(failIndex, in, 1)}, failedPod("p", now, 1), failIndex, true, ""},
		{"container name restricts", []batchv1.PodFailurePolicyRule{{Action: ignore, OnExitCodes: &batchv1.PodFailurePolicyOnExitCodesRequirement{
			ContainerName: ptr.To("c1"), Operator: in, Values: []int32{1}}}}, failedPod("p", now, 1, 0), "", true, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var policy *batchv1.PodFailurePolicy
			if tc.rules != nil {
				policy = &batchv1.PodFailurePolicy{Rules: tc.rules}
			}
			got := matchPodFailurePolicy(policy, tc.pod)
			if got.action != tc.want || got.counts != tc.counts || got.failJob != tc.msg {
				t.Fatalf("got %+v, want action %q counts %v msg %q", got, tc.want, tc.counts, tc.msg)
			}
		})
	}
}

func TestMatchSuccessPolicy(t *testing.T) {
	rules := func(r ...batchv1.SuccessPolicyRule) *batchv1.SuccessPolicy { return &batchv1.SuccessPolicy{Rules: r} }
	for _, tc := range []struct {
		name      string
		policy    *batchv1.SuccessPolicy
		succeeded []int
		want      string
	}{
		{"no policy", nil, []int{0, 1}, ""},
		{"nothing succeeded", rules(batchv1.SuccessPolicyRule{SucceededCount: ptr.To[int32](0)}), nil, ""},
		{"count reached", rules(batchv1.SuccessPolicyRule{SucceededCount: ptr.To[int32](2)}), []int{1, 4}, "Matched rules at index 0"},
		{"count not reached", rules(batchv1.SuccessPolicyRule{SucceededCount: ptr.To[int32](3)}), []int{1, 4}, ""},
		{"all listed indexes", rules(batchv1.SuccessPolicyRule{SucceededIndexes: ptr.To("0")}), []int{0}, "Matched rules at index 0"},
		{"listed index missing", rules(batchv1.SuccessPolicyRule{SucceededIndexes: ptr.To("0,2-3")}), []int{0, 2, 4}, ""},
		{"count within listed", rules(batchv1.SuccessPolicyRule{SucceededIndexes: ptr.To("0,2-3"), SucceededCount: ptr.To[int32](2)}),
			[]int{1, 3, 2}, "Matched rules at index 0"},
		{"later rule matches", rules(batchv1.SuccessPolicyRule{SucceededIndexes: ptr.To("4")},
			batchv1.SuccessPolicyRule{SucceededCount: ptr.To[int32](1)}), []int{1}, "Matched rules at index 1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			msg, ok := matchSuccessPolicy(tc.policy, 5, sets.New(tc.succeeded...))
			if msg != tc.want || ok != (tc.want != "") {
				t.Fatalf("got %q %v, want %q", msg, ok, tc.want)
			}
		})
	}
}
