package e2e

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
)

// jobsIndexedSpec is an Indexed Job running script in busybox.
func jobsIndexedSpec(name, script string, completions, parallelism int32) *batchv1.Job {
	j := jobsSpec("default", name, script, completions, parallelism)
	j.Spec.CompletionMode = ptr.To(batchv1.IndexedCompletion)
	return j
}

func jobsPods(t *testing.T, cs kubernetes.Interface, job string) []corev1.Pod {
	t.Helper()
	l, err := cs.CoreV1().Pods("default").List(context.Background(), metav1.ListOptions{LabelSelector: batchv1.JobNameLabel + "=" + job})
	if err != nil {
		t.Fatal(err)
	}
	return l.Items
}

func exitCodeRule(action batchv1.PodFailurePolicyAction, code int32) batchv1.PodFailurePolicyRule {
	return batchv1.PodFailurePolicyRule{Action: action, OnExitCodes: &batchv1.PodFailurePolicyOnExitCodesRequirement{
		Operator: batchv1.PodFailurePolicyOnExitCodesOpIn, Values: []int32{code}}}
}

// jobsFailJob: a container exiting 1 matches the second rule (FailJob): the
// Job fails at once with reason PodFailurePolicy, without a retry although
// backoffLimit allows 6.
func jobsFailJob(t *testing.T, cs kubernetes.Interface) {
	j := jobsSpec("default", "failjob", "exit 1", 3, 1)
	j.Spec.PodFailurePolicy = &batchv1.PodFailurePolicy{Rules: []batchv1.PodFailurePolicyRule{
		exitCodeRule(batchv1.PodFailurePolicyActionIgnore, 2), exitCodeRule(batchv1.PodFailurePolicyActionFailJob, 1)}}
	jobsCreate(t, cs, j)
	got := jobsWaitCondition(t, cs, "default", "failjob", batchv1.JobFailed, 120*time.Second)
	c := jobsCondition(got, batchv1.JobFailed)
	if c.Reason != batchv1.JobReasonPodFailurePolicy || !strings.HasSuffix(c.Message, "failed with exit code 1 matching FailJob rule at index 1") {
		t.Fatalf("Failed condition %+v", c)
	}
	if ft := jobsCondition(got, batchv1.JobFailureTarget); ft == nil || ft.Reason != c.Reason || got.Status.Failed != 1 {
		t.Fatalf("status of the failed job: %+v", got.Status)
	}
	if n := len(jobsPods(t, cs, "failjob")); n != 1 {
		t.Fatalf("%d pods, want 1: FailJob allows no retry", n)
	}
}

// jobsIgnoreEviction: the pod (index 0) leaves a marker in a hostPath
// directory and waits; it is evicted, so the agent reports it Failed
// keeping the eviction's DisruptionTarget condition; the Ignore rule keeps
// the failure out of backoffLimit 0 and the replacement, seeing the
// marker, succeeds.
func jobsIgnoreEviction(t *testing.T, cs kubernetes.Interface) {
	dir := t.TempDir()
	j := jobsIndexedSpec("evicted", "if [ -f /data/marker ]; then exit 0; fi; touch /data/marker; sleep 300", 1, 1)
	j.Spec.BackoffLimit = ptr.To[int32](0)
	j.Spec.PodFailurePolicy = &batchv1.PodFailurePolicy{Rules: []batchv1.PodFailurePolicyRule{{Action: batchv1.PodFailurePolicyActionIgnore,
		OnPodConditions: []batchv1.PodFailurePolicyOnPodConditionsPattern{{Type: corev1.DisruptionTarget}}}}}
	spec := &j.Spec.Template.Spec
	spec.Volumes = []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: dir}}}}
	spec.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "data", MountPath: "/data"}}
	seen := jobsWatchPods(t, cs, "evicted")
	jobsCreate(t, cs, j)
	victim := jobsWaitRunning(t, cs, "default", batchv1.JobNameLabel+"=evicted", 1)[0]
	waitFor(t, 30*time.Second, "the marker", func() (bool, error) {
		_, err := os.Stat(filepath.Join(dir, "marker"))
		return err == nil, nil
	})
	if err := cs.CoreV1().Pods("default").EvictV1(context.Background(), &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Name: victim.Name}}); err != nil {
		t.Fatal(err)
	}
	got := jobsWaitCondition(t, cs, "default", "evicted", batchv1.JobComplete, 120*time.Second)
	if c := jobsCondition(got, batchv1.JobComplete); c.Reason != batchv1.JobReasonCompletionsReached || got.Status.Failed != 0 || got.Status.Succeeded != 1 {
		t.Fatalf("status of the job: %+v", got.Status)
	}
	last := seen(victim.Name)
	if last == nil || last.Status.Phase != corev1.PodFailed || !jobsHasPodCondition(last, corev1.DisruptionTarget, "EvictionByEvictionAPI") {
		t.Fatalf("the evicted pod was last seen as %+v", last)
	}
}

// jobsWatchPods records the last state of each pod of job; the returned
// function reads it.
func jobsWatchPods(t *testing.T, cs kubernetes.Interface, job string) func(name string) *corev1.Pod {
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	w, err := cs.CoreV1().Pods("default").Watch(ctx, metav1.ListOptions{LabelSelector: batchv1.JobNameLabel + "=" + job})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Stop)
	var mu sync.Mutex
	last := map[string]*corev1.Pod{}
	go func() {
		for ev := range w.ResultChan() {
			if p, ok := ev.Object.(*corev1.Pod); ok && ev.Type != watch.Deleted {
				mu.Lock()
				last[p.Name] = p
				mu.Unlock()
			}
		}
	}()
	return func(name string) *corev1.Pod {
		mu.Lock()
		defer mu.Unlock()
		return last[name]
	}
}

func jobsHasPodCondition(p *corev1.Pod, typ corev1.PodConditionType, reason string) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == typ && c.Status == corev1.ConditionTrue && c.Reason == reason {
			return true
		}
	}
	return false
}

// jobsPerIndex: backoffLimitPerIndex 1; index 0 succeeds, index 1 always
// exits 1 (one retry, carrying the failure count), index 2 exits 42, which
// a FailIndex rule fails at once. The Job fails with FailedIndexes after
// every index ran.
func jobsPerIndex(t *testing.T, cs kubernetes.Interface) {
	j := jobsIndexedSpec("perindex", `case $JOB_COMPLETION_INDEX in 0) exit 0;; 1) exit 1;; *) exit 42;; esac`, 3, 3)
	j.Spec.BackoffLimitPerIndex = ptr.To[int32](1)
	j.Spec.PodFailurePolicy = &batchv1.PodFailurePolicy{Rules: []batchv1.PodFailurePolicyRule{
		exitCodeRule(batchv1.PodFailurePolicyActionFailIndex, 42)}}
	jobsCreate(t, cs, j)
	got := jobsWaitCondition(t, cs, "default", "perindex", batchv1.JobFailed, 120*time.Second)
	if c := jobsCondition(got, batchv1.JobFailed); c.Reason != batchv1.JobReasonFailedIndexes {
		t.Fatalf("Failed condition %+v", c)
	}
	if ptr.Deref(got.Status.FailedIndexes, "") != "1,2" || got.Status.CompletedIndexes != "0" || got.Status.Failed != 3 || got.Status.Succeeded != 1 {
		t.Fatalf("status of the job: %+v", got.Status)
	}
	counts := map[string][]string{}
	for _, p := range jobsPods(t, cs, "perindex") {
		ix := p.Annotations[batchv1.JobCompletionIndexAnnotation]
		counts[ix] = append(counts[ix], p.Annotations[batchv1.JobIndexFailureCountAnnotation])
	}
	slices.Sort(counts["1"])
	if !slices.Equal(counts["0"], []string{"0"}) || !slices.Equal(counts["1"], []string{"0", "1"}) || !slices.Equal(counts["2"], []string{"0"}) {
		t.Fatalf("pods and failure counts by index: %v", counts)
	}

	m := jobsIndexedSpec("maxfailed", "exit 1", 3, 1)
	m.Spec.BackoffLimitPerIndex, m.Spec.MaxFailedIndexes = ptr.To[int32](0), ptr.To[int32](0)
	jobsCreate(t, cs, m)
	got = jobsWaitCondition(t, cs, "default", "maxfailed", batchv1.JobFailed, 120*time.Second)
	if c := jobsCondition(got, batchv1.JobFailed); c.Reason != batchv1.JobReasonMaxFailedIndexesExceeded ||
		ptr.Deref(got.Status.FailedIndexes, "") != "0" || got.Status.Failed != 1 {
		t.Fatalf("job over maxFailedIndexes: %+v", got.Status)
	}
	if n := len(jobsPods(t, cs, "maxfailed")); n != 1 {
		t.Fatalf("%d pods, want 1", n)
	}
}

// jobsSuccessPolicy: index 0 succeeding meets the successPolicy; the other
// indexes' pods are deleted, then the Job is Complete (SuccessPolicy).
func jobsSuccessPolicy(t *testing.T, cs kubernetes.Interface) {
	j := jobsIndexedSpec("succeeds", `[ "$JOB_COMPLETION_INDEX" = 0 ] && exit 0; sleep 300`, 3, 3)
	j.Spec.SuccessPolicy = &batchv1.SuccessPolicy{Rules: []batchv1.SuccessPolicyRule{{SucceededIndexes: ptr.To("0")}}}
	jobsCreate(t, cs, j)
	got := jobsWaitCondition(t, cs, "default", "succeeds", batchv1.JobComplete, 120*time.Second)
	met, done := jobsCondition(got, batchv1.JobSuccessCriteriaMet), jobsCondition(got, batchv1.JobComplete)
	if met == nil || met.Reason != batchv1.JobReasonSuccessPolicy || met.Message != "Matched rules at index 0" ||
		done.Reason != batchv1.JobReasonSuccessPolicy || done.LastTransitionTime.Before(&met.LastTransitionTime) {
		t.Fatalf("conditions %+v", got.Status.Conditions)
	}
	if got.Status.CompletedIndexes != "0" || got.Status.Active != 0 || ptr.Deref(got.Status.Terminating, -1) != 0 ||
		ptr.Deref(got.Status.Ready, -1) != 0 || got.Status.CompletionTime == nil {
		t.Fatalf("status of the job: %+v", got.Status)
	}
}
