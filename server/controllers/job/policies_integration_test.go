package job

import (
	"context"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/orch/orch/server/controllers/kit/kittest"
)

// exit finishes a pod as its kubelet would: the container exited with
// code, the pod Succeeded (code 0) or Failed.
func exit(t *testing.T, cs kubernetes.Interface, p corev1.Pod, code int32) {
	t.Helper()
	p.Status.Phase = corev1.PodFailed
	if code == 0 {
		p.Status.Phase = corev1.PodSucceeded
	}
	p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "c", State: corev1.ContainerState{
		Terminated: &corev1.ContainerStateTerminated{ExitCode: code, FinishedAt: metav1.Now()}}}}
	if _, err := cs.CoreV1().Pods("default").UpdateStatus(context.Background(), &p, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// reap removes pods being deleted, as a kubelet does once they stopped.
func reap(t *testing.T, cs kubernetes.Interface, job string) {
	t.Helper()
	for _, p := range listPods(t, cs, job) {
		if p.DeletionTimestamp != nil {
			_ = cs.CoreV1().Pods("default").Delete(context.Background(), p.Name, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)})
		}
	}
}

// byIndex are the running pods of an Indexed Job by index.
func byIndex(t *testing.T, cs kubernetes.Interface, job string) map[string]corev1.Pod {
	out := map[string]corev1.Pod{}
	for _, p := range running(listPods(t, cs, job)) {
		out[p.Annotations[batchv1.JobCompletionIndexAnnotation]] = p
	}
	return out
}

func createJob(t *testing.T, cs kubernetes.Interface, j *batchv1.Job) {
	t.Helper()
	if _, err := cs.BatchV1().Jobs("default").Create(context.Background(), j, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// waitFinished waits for the Job's terminal condition, reaping deleted pods.
func waitFinished(t *testing.T, cs kubernetes.Interface, name string, want batchv1.JobConditionType) *batchv1.Job {
	t.Helper()
	kittest.Until(t, "job "+name+" "+string(want), func() bool {
		reap(t, cs, name)
		return hasCondition(getJob(t, cs, name), want)
	})
	return getJob(t, cs, name)
}

func indexedJob(name string, completions, parallelism int32) *batchv1.Job {
	j := testJob(name, completions, parallelism)
	j.Spec.CompletionMode = ptr.To(batchv1.IndexedCompletion)
	return j
}

// A pod failing with an exit code of a FailJob rule fails the Job, even
// when the other pods succeed.
func TestJobPodFailurePolicyFailJob(t *testing.T) {
	cs := startController(t, 10*time.Millisecond)
	j := testJob("failjob", 3, 2)
	j.Spec.PodFailurePolicy = &batchv1.PodFailurePolicy{Rules: []batchv1.PodFailurePolicyRule{
		rule(batchv1.PodFailurePolicyActionFailJob, batchv1.PodFailurePolicyOnExitCodesOpIn, 1)}}
	createJob(t, cs, j)
	var act []corev1.Pod
	kittest.Until(t, "2 pods", func() bool { act = running(listPods(t, cs, "failjob")); return len(act) == 2 })
	exit(t, cs, act[1], 0)
	exit(t, cs, act[0], 1)
	got := waitFinished(t, cs, "failjob", batchv1.JobFailed)
	ft, failed := condition(got, batchv1.JobFailureTarget), condition(got, batchv1.JobFailed)
	if ft == nil || ft.Reason != batchv1.JobReasonPodFailurePolicy || failed.Reason != batchv1.JobReasonPodFailurePolicy ||
		failed.Message != "Container c for pod default/"+act[0].Name+" failed with exit code 1 matching FailJob rule at index 0" {
		t.Fatalf("conditions %+v", got.Status.Conditions)
	}
	if hasCondition(got, batchv1.JobComplete) || got.Status.Active != 0 || *got.Status.Terminating != 0 {
		t.Fatalf("status %+v", got.Status)
	}
}

// An evicted pod (DisruptionTarget) matching an Ignore rule is replaced
// once it is Failed and does not count toward backoffLimit.
func TestJobPodFailurePolicyIgnoresEviction(t *testing.T) {
	cs := startController(t, 10*time.Millisecond)
	j := indexedJob("evict", 2, 2)
	j.Spec.BackoffLimit = ptr.To[int32](0)
	j.Spec.PodFailurePolicy = &batchv1.PodFailurePolicy{Rules: []batchv1.PodFailurePolicyRule{
		condRule(batchv1.PodFailurePolicyActionIgnore, corev1.DisruptionTarget)}}
	createJob(t, cs, j)
	var pods map[string]corev1.Pod
	kittest.Until(t, "2 pods", func() bool { pods = byIndex(t, cs, "evict"); return len(pods) == 2 })
	victim := pods["0"]
	if err := cs.CoreV1().Pods("default").EvictV1(context.Background(), &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Name: victim.Name}}); err != nil {
		t.Fatal(err)
	}
	kittest.Until(t, "evicted pod marked", func() bool {
		p, err := cs.CoreV1().Pods("default").Get(context.Background(), victim.Name, metav1.GetOptions{})
		return err == nil && p.DeletionTimestamp != nil && matchOnPodConditions(&p.Status, j.Spec.PodFailurePolicy.Rules[0].OnPodConditions) != nil
	})
	p, _ := cs.CoreV1().Pods("default").Get(context.Background(), victim.Name, metav1.GetOptions{})
	exit(t, cs, *p, 137)
	kittest.Until(t, "replacement of index 0", func() bool {
		n := byIndex(t, cs, "evict")["0"]
		return n.Name != "" && n.Name != victim.Name
	})
	for _, p := range byIndex(t, cs, "evict") {
		exit(t, cs, p, 0)
	}
	got := waitFinished(t, cs, "evict", batchv1.JobComplete)
	if got.Status.Failed != 0 || got.Status.Succeeded != 2 || got.Status.CompletedIndexes != "0,1" {
		t.Fatalf("status %+v", got.Status)
	}
}

// With backoffLimitPerIndex an index is retried with its failure count on
// the new pod, then marked failed; the other indexes still run; a FailIndex
// rule fails an index at once.
func TestJobBackoffLimitPerIndex(t *testing.T) {
	cs := startController(t, 10*time.Millisecond)
	j := indexedJob("perindex", 3, 3)
	j.Spec.BackoffLimit = nil
	j.Spec.BackoffLimitPerIndex = ptr.To[int32](1)
	j.Spec.PodFailurePolicy = &batchv1.PodFailurePolicy{Rules: []batchv1.PodFailurePolicyRule{
		rule(batchv1.PodFailurePolicyActionFailIndex, batchv1.PodFailurePolicyOnExitCodesOpIn, 42)}}
	createJob(t, cs, j)
	var pods map[string]corev1.Pod
	kittest.Until(t, "3 pods", func() bool { pods = byIndex(t, cs, "perindex"); return len(pods) == 3 })
	first := pods["1"]
	exit(t, cs, first, 1)
	var retry corev1.Pod
	kittest.Until(t, "retry of index 1", func() bool {
		retry = byIndex(t, cs, "perindex")["1"]
		return retry.Name != "" && retry.Name != first.Name
	})
	if retry.Annotations[failureCountAnnotation] != "1" || pods["0"].Annotations[failureCountAnnotation] != "0" {
		t.Fatalf("failure counts: retry %v, index 0 %v", retry.Annotations, pods["0"].Annotations)
	}
	exit(t, cs, retry, 1)
	exit(t, cs, pods["2"], 42) // FailIndex: no retry
	exit(t, cs, pods["0"], 0)
	got := waitFinished(t, cs, "perindex", batchv1.JobFailed)
	if c := condition(got, batchv1.JobFailed); c.Reason != batchv1.JobReasonFailedIndexes {
		t.Fatalf("Failed %+v", c)
	}
	if ptr.Deref(got.Status.FailedIndexes, "") != "1,2" || got.Status.CompletedIndexes != "0" || got.Status.Failed != 3 || got.Status.Succeeded != 1 {
		t.Fatalf("status %+v", got.Status)
	}
	if n := len(listPods(t, cs, "perindex")); n != 4 {
		t.Fatalf("%d pods, want 4 (one retry of index 1, none of index 2)", n)
	}
}

// A successPolicy met by index 0 ends the Job: the other pods are deleted,
// then it is Complete with reason SuccessPolicy.
func TestJobSuccessPolicy(t *testing.T) {
	cs := startController(t, 10*time.Millisecond)
	j := indexedJob("success", 3, 3)
	j.Spec.SuccessPolicy = &batchv1.SuccessPolicy{Rules: []batchv1.SuccessPolicyRule{{SucceededIndexes: ptr.To("0")}}}
	createJob(t, cs, j)
	var pods map[string]corev1.Pod
	kittest.Until(t, "3 pods", func() bool { pods = byIndex(t, cs, "success"); return len(pods) == 3 })
	exit(t, cs, pods["0"], 0)
	kittest.Until(t, "SuccessCriteriaMet", func() bool {
		c := condition(getJob(t, cs, "success"), batchv1.JobSuccessCriteriaMet)
		return c != nil && c.Reason == batchv1.JobReasonSuccessPolicy && c.Message == "Matched rules at index 0"
	})
	got := waitFinished(t, cs, "success", batchv1.JobComplete)
	if c := condition(got, batchv1.JobComplete); c.Reason != batchv1.JobReasonSuccessPolicy {
		t.Fatalf("Complete %+v", c)
	}
	if got.Status.CompletedIndexes != "0" || got.Status.Active != 0 || *got.Status.Ready != 0 || *got.Status.Terminating != 0 || got.Status.CompletionTime == nil {
		t.Fatalf("status %+v", got.Status)
	}
}

// A pod that loses its controller reference is adopted again; one whose
// labels stop matching is released and loses the tracking finalizer.
func TestJobAdoptsAndReleases(t *testing.T) {
	cs := startController(t, 10*time.Millisecond)
	createJob(t, cs, testJob("adopt", 2, 1))
	var p corev1.Pod
	kittest.Until(t, "a pod", func() bool { act := running(listPods(t, cs, "adopt")); p = firstOr(act); return len(act) == 1 })
	pods := cs.CoreV1().Pods("default")
	kittest.Update[*corev1.Pod](t, pods, p.Name, func(p *corev1.Pod) { p.OwnerReferences = nil })
	kittest.Until(t, "adopted", func() bool {
		got, err := pods.Get(context.Background(), p.Name, metav1.GetOptions{})
		return err == nil && metav1.GetControllerOf(got) != nil && hasFinalizer(got)
	})
	kittest.Update[*corev1.Pod](t, pods, p.Name, func(p *corev1.Pod) { p.Labels = nil })
	kittest.Until(t, "released", func() bool {
		got, err := pods.Get(context.Background(), p.Name, metav1.GetOptions{})
		return err == nil && metav1.GetControllerOf(got) == nil && !hasFinalizer(got)
	})
}

func firstOr(pods []corev1.Pod) corev1.Pod {
	if len(pods) == 0 {
		return corev1.Pod{}
	}
	return pods[0]
}
