package job

import (
	"strconv"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
)

var testNow = time.Unix(10000, 0)

// policyJob is a Job of 4 completions (Indexed when indexed) with mutate applied.
func policyJob(indexed bool, mutate func(*batchv1.Job)) *batchv1.Job {
	j := testJob("j", 4, 2)
	j.UID = "job-uid"
	j.Spec.BackoffLimit = ptr.To[int32](6)
	j.Status.StartTime = ptr.To(metav1.NewTime(testNow.Add(-time.Minute)))
	if indexed {
		j.Spec.CompletionMode = ptr.To(batchv1.IndexedCompletion)
	}
	if mutate != nil {
		mutate(j)
	}
	return j
}

// pod builds a pod of the Job in phase with the given index (-1: none) and
// exit code (for finished pods).
func pod(name string, phase corev1.PodPhase, index int, exit int32) *corev1.Pod {
	p := failedPod(name, testNow.Add(-time.Second), exit)
	p.Status.Phase = phase
	p.UID = types.UID("uid-" + name)
	if phase == corev1.PodRunning || phase == corev1.PodPending {
		p.Status.ContainerStatuses = nil
	}
	if index >= 0 {
		p.Annotations[batchv1.JobCompletionIndexAnnotation] = strconv.Itoa(index)
	}
	return p
}

func annotated(p *corev1.Pod, kv ...string) *corev1.Pod {
	for i := 0; i+1 < len(kv); i += 2 {
		p.Annotations[kv[i]] = kv[i+1]
	}
	return p
}

func stateFor(j *batchv1.Job, pods ...*corev1.Pod) *jobState {
	c := &Controller{now: func() time.Time { return testNow }, exp: newExpectations(), backoff: map[string]backoffRecord{}, backoffBase: backoffBase}
	return c.newState(j, "default/j", pods)
}

func withJobCondition(t batchv1.JobConditionType, reason string) func(*batchv1.Job) {
	return func(j *batchv1.Job) { setCondition(j, t, reason, "earlier", testNow.Add(-time.Second)) }
}

func TestDecide(t *testing.T) {
	in := batchv1.PodFailurePolicyOnExitCodesOpIn
	failJobOn1 := func(j *batchv1.Job) {
		j.Spec.PodFailurePolicy = &batchv1.PodFailurePolicy{Rules: []batchv1.PodFailurePolicyRule{rule(batchv1.PodFailurePolicyActionFailJob, in, 1)}}
	}
	perIndex := func(limit int32, maxFailed *int32) func(*batchv1.Job) {
		return func(j *batchv1.Job) { j.Spec.BackoffLimitPerIndex, j.Spec.MaxFailedIndexes = ptr.To(limit), maxFailed }
	}
	ok, failed, running := corev1.PodSucceeded, corev1.PodFailed, corev1.PodRunning
	for _, tc := range []struct {
		name          string
		job           *batchv1.Job
		pods          []*corev1.Pod
		want          batchv1.JobConditionType // "" = not decided
		reason        string
		failedIndexes string
	}{
		{"running", policyJob(false, nil), []*corev1.Pod{pod("a", running, -1, 0)}, "", "", ""},
		{"FailJob beats the completions", policyJob(false, failJobOn1), []*corev1.Pod{pod("a", failed, -1, 1),
			pod("b", ok, -1, 0), pod("c", ok, -1, 0), pod("d", ok, -1, 0), pod("e", ok, -1, 0)},
			batchv1.JobFailureTarget, batchv1.JobReasonPodFailurePolicy, ""},
		{"exit code outside the rule counts", policyJob(false, failJobOn1), []*corev1.Pod{pod("a", failed, -1, 2)}, "", "", ""},
		{"FailureTarget turns Failed", policyJob(false, withJobCondition(batchv1.JobFailureTarget, "BackoffLimitExceeded")), nil,
			batchv1.JobFailed, "BackoffLimitExceeded", ""},
		{"SuccessCriteriaMet stands", policyJob(false, func(j *batchv1.Job) {
			failJobOn1(j)
			withJobCondition(batchv1.JobSuccessCriteriaMet, "CompletionsReached")(j)
		}), []*corev1.Pod{pod("a", failed, -1, 1)}, batchv1.JobSuccessCriteriaMet, "CompletionsReached", ""},
		{"backoff limit", policyJob(false, func(j *batchv1.Job) { j.Spec.BackoffLimit = ptr.To[int32](1) }),
			[]*corev1.Pod{pod("a", failed, -1, 3), pod("b", failed, -1, 3)}, batchv1.JobFailureTarget, batchv1.JobReasonBackoffLimitExceeded, ""},
		{"ignored failures do not count", policyJob(false, func(j *batchv1.Job) {
			j.Spec.BackoffLimit = ptr.To[int32](0)
			j.Spec.PodFailurePolicy = &batchv1.PodFailurePolicy{Rules: []batchv1.PodFailurePolicyRule{condRule(batchv1.PodFailurePolicyActionIgnore, corev1.DisruptionTarget)}}
		}), []*corev1.Pod{withCondition(pod("a", failed, -1, 137), corev1.DisruptionTarget, corev1.ConditionTrue)}, "", "", ""},
		{"restarts of OnFailure pods", policyJob(false, func(j *batchv1.Job) {
			j.Spec.BackoffLimit = ptr.To[int32](2)
			j.Spec.Template.Spec.RestartPolicy = corev1.RestartPolicyOnFailure
		}), []*corev1.Pod{func() *corev1.Pod {
			p := pod("a", running, -1, 0)
			p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "c", RestartCount: 2}}
			return p
		}()}, batchv1.JobFailureTarget, batchv1.JobReasonBackoffLimitExceeded, ""},
		{"deadline", policyJob(false, func(j *batchv1.Job) { j.Spec.ActiveDeadlineSeconds = ptr.To[int64](30) }),
			[]*corev1.Pod{pod("a", running, -1, 0)}, batchv1.JobFailureTarget, batchv1.JobReasonDeadlineExceeded, ""},
		{"max failed indexes", policyJob(true, perIndex(0, ptr.To[int32](0))), []*corev1.Pod{pod("a", failed, 0, 1)},
			batchv1.JobFailureTarget, batchv1.JobReasonMaxFailedIndexesExceeded, "0"},
		{"index with retries left", policyJob(true, perIndex(1, nil)), []*corev1.Pod{pod("a", failed, 1, 1)}, "", "", ""},
		{"index out of retries", policyJob(true, perIndex(1, nil)), []*corev1.Pod{
			annotated(pod("a", failed, 1, 1), failureCountAnnotation, "1"), pod("b", ok, 0, 0)}, "", "", "1"},
		{"every index done, some failed", policyJob(true, func(j *batchv1.Job) {
			perIndex(1, nil)(j)
			j.Spec.Completions = ptr.To[int32](2)
			j.Spec.PodFailurePolicy = &batchv1.PodFailurePolicy{Rules: []batchv1.PodFailurePolicyRule{rule(batchv1.PodFailurePolicyActionFailIndex, in, 1)}}
		}), []*corev1.Pod{pod("a", failed, 1, 1), pod("b", ok, 0, 0)}, batchv1.JobFailureTarget, batchv1.JobReasonFailedIndexes, "1"},
		{"success policy", policyJob(true, func(j *batchv1.Job) {
			j.Spec.SuccessPolicy = &batchv1.SuccessPolicy{Rules: []batchv1.SuccessPolicyRule{{SucceededIndexes: ptr.To("0")}}}
		}), []*corev1.Pod{pod("a", ok, 0, 0), pod("b", failed, 1, 1), pod("c", running, 2, 0)},
			batchv1.JobSuccessCriteriaMet, batchv1.JobReasonSuccessPolicy, ""},
		{"success policy not met", policyJob(true, func(j *batchv1.Job) {
			j.Spec.SuccessPolicy = &batchv1.SuccessPolicy{Rules: []batchv1.SuccessPolicyRule{{SucceededCount: ptr.To[int32](2)}}}
		}), []*corev1.Pod{pod("a", ok, 3, 0)}, "", "", ""},
		{"failure beats success policy", policyJob(true, func(j *batchv1.Job) {
			failJobOn1(j)
			j.Spec.SuccessPolicy = &batchv1.SuccessPolicy{Rules: []batchv1.SuccessPolicyRule{{SucceededCount: ptr.To[int32](1)}}}
		}), []*corev1.Pod{pod("a", ok, 0, 0), pod("b", failed, 1, 1)}, batchv1.JobFailureTarget, batchv1.JobReasonPodFailurePolicy, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := stateFor(tc.job, tc.pods...)
			s.decide()
			switch {
			case tc.want == "" && s.finished != nil:
				t.Fatalf("decided %+v", s.finished)
			case tc.want != "" && (s.finished == nil || s.finished.Type != tc.want || s.finished.Reason != tc.reason):
				t.Fatalf("decided %+v, want %s/%s", s.finished, tc.want, tc.reason)
			}
			if got := formatIndexes(s.failedIdx); got != tc.failedIndexes {
				t.Errorf("failed indexes %q, want %q", got, tc.failedIndexes)
			}
		})
	}
}

// A failed index's last pod waits for its replacement, which takes its
// failure counts over; the index backs off per failure.
func TestPerIndexReplacement(t *testing.T) {
	ignoreDisruption := batchv1.PodFailurePolicyRule{Action: batchv1.PodFailurePolicyActionIgnore,
		OnPodConditions: []batchv1.PodFailurePolicyOnPodConditionsPattern{{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue}}}
	j := policyJob(true, func(j *batchv1.Job) {
		j.Spec.BackoffLimitPerIndex = ptr.To[int32](3)
		j.Spec.PodFailurePolicy = &batchv1.PodFailurePolicy{Rules: []batchv1.PodFailurePolicyRule{ignoreDisruption}}
	})
	older := annotated(pod("old", corev1.PodFailed, 1, 1), failureCountAnnotation, "0")
	older.Status.ContainerStatuses[0].State.Terminated.FinishedAt = metav1.NewTime(testNow.Add(-time.Hour))
	last := annotated(pod("last", corev1.PodFailed, 1, 1), failureCountAnnotation, "1")
	evicted := withCondition(pod("evicted", corev1.PodFailed, 2, 137), corev1.DisruptionTarget, corev1.ConditionTrue)
	s := stateFor(j, older, last, evicted, pod("run", corev1.PodRunning, 0, 0))
	s.decide()
	if s.delayed[1] != last || s.delayed[2] != evicted || len(s.delayed) != 2 {
		t.Fatalf("delayed pods %v", s.delayed)
	}
	if c, i := replacementCounts(j, last); c != 2 || i != 0 {
		t.Errorf("replacement of a counted failure: %d/%d, want 2/0", c, i)
	}
	if c, i := replacementCounts(j, evicted); c != 0 || i != 1 {
		t.Errorf("replacement of an ignored failure: %d/%d, want 0/1", c, i)
	}
	if got := indexBackoffLeft(last, testNow, backoffBase); got != 20*time.Second-time.Second {
		t.Errorf("index back-off after 2 failures: %v", got)
	}
	if s.canRemoveFinalizer(last, true) || !s.canRemoveFinalizer(older, true) {
		t.Error("only the index's last failed pod keeps its finalizer")
	}
	if got := firstPendingIndexes(s, 4); len(got) != 3 || got[0] != 1 || got[2] != 3 {
		t.Errorf("pending indexes %v, want [1 2 3]", got)
	}
}

func TestNextBackoff(t *testing.T) {
	at := func(name string, phase corev1.PodPhase, sec int) *corev1.Pod {
		p := failedPod(name, testNow.Add(time.Duration(sec)*time.Second), 1)
		p.Status.Phase = phase
		return p
	}
	start := backoffRecord{failures: 2, last: testNow}
	for _, tc := range []struct {
		name              string
		succeeded, failed []*corev1.Pod
		want              backoffRecord
	}{
		{"nothing new", nil, nil, start},
		{"failures add", nil, []*corev1.Pod{at("b", corev1.PodFailed, 9), at("a", corev1.PodFailed, 5)},
			backoffRecord{failures: 4, last: testNow.Add(9 * time.Second)}},
		{"success resets", []*corev1.Pod{at("s", corev1.PodSucceeded, 5)}, nil, backoffRecord{}},
		{"failures after the success count", []*corev1.Pod{at("s", corev1.PodSucceeded, 5)},
			[]*corev1.Pod{at("a", corev1.PodFailed, 3), at("b", corev1.PodFailed, 7), at("c", corev1.PodFailed, 8)},
			backoffRecord{failures: 2, last: testNow.Add(8 * time.Second)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := nextBackoff(start, tc.succeeded, tc.failed); got.failures != tc.want.failures || !got.last.Equal(tc.want.last) {
				t.Fatalf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

// The interim condition is written first; Failed or Complete only once no
// pod is terminating or uncounted.
func TestFinishOrder(t *testing.T) {
	j := policyJob(false, nil)
	s := stateFor(j)
	s.finished = newCondition(batchv1.JobFailureTarget, batchv1.JobReasonPodFailurePolicy, "m", testNow)
	s.terminating = 1
	if !s.recordInterim() || !hasCondition(s.job, batchv1.JobFailureTarget) || s.finished.Type != batchv1.JobFailed {
		t.Fatalf("interim FailureTarget not recorded: %+v, finished %+v", s.job.Status.Conditions, s.finished)
	}
	if s.enactFinished() || hasCondition(s.job, batchv1.JobFailed) {
		t.Fatal("Failed while a pod is terminating")
	}
	s.terminating = 0
	if !s.enactFinished() || condition(s.job, batchv1.JobFailed).Reason != batchv1.JobReasonPodFailurePolicy {
		t.Fatalf("not Failed once the pods are gone: %+v", s.job.Status.Conditions)
	}

	s = stateFor(policyJob(true, nil))
	s.finished = newCondition(batchv1.JobSuccessCriteriaMet, batchv1.JobReasonSuccessPolicy, "Matched rules at index 0", testNow)
	s.recordInterim()
	if !s.enactFinished() || s.job.Status.CompletionTime == nil || condition(s.job, batchv1.JobComplete).Reason != batchv1.JobReasonSuccessPolicy {
		t.Fatalf("Complete: %+v", s.job.Status)
	}
}
