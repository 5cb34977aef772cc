package e2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
)

// TestJobs runs Jobs, a CronJob, namespace deletion, the garbage
// collector's propagation policies, pod failure and success policies and
// per-index back-off on one server and one real agent.
func TestJobs(t *testing.T) {
	e := startCluster(t)
	cs := e.server.Clientset
	waitNodeReady(t, e, true)
	t.Run("ParallelJobCompletes", func(t *testing.T) { jobsParallel(t, cs) })
	t.Run("IndexedJobGetsIndexes", func(t *testing.T) { jobsIndexed(t, cs) })
	t.Run("BackoffLimitFails", func(t *testing.T) { jobsBackoff(t, cs) })
	t.Run("TTLDeletesFinishedJob", func(t *testing.T) { jobsTTL(t, cs) })
	t.Run("ForegroundAndOrphanDeletion", func(t *testing.T) { jobsPropagation(t, cs) })
	t.Run("NamespaceDeletion", func(t *testing.T) { jobsNamespaceDeletion(t, cs) })
	t.Run("CronJobFires", func(t *testing.T) { jobsCron(t, cs) })
	t.Run("PodFailurePolicyFailJob", func(t *testing.T) { jobsFailJob(t, cs) })
	t.Run("PodFailurePolicyIgnoresEviction", func(t *testing.T) { jobsIgnoreEviction(t, cs) })
	t.Run("BackoffLimitPerIndex", func(t *testing.T) { jobsPerIndex(t, cs) })
	t.Run("SuccessPolicy", func(t *testing.T) { jobsSuccessPolicy(t, cs) })
}

// jobsSpec is a Job running script in busybox.
func jobsSpec(ns, name, script string, completions, parallelism int32) *batchv1.Job {
	return &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, Spec: batchv1.JobSpec{
		Completions: ptr.To(completions), Parallelism: ptr.To(parallelism),
		Template: jobsPodTemplate(script),
	}}
}

func jobsPodTemplate(script string) corev1.PodTemplateSpec {
	c := bbContainer("main", script)
	c.ImagePullPolicy = corev1.PullIfNotPresent
	return corev1.PodTemplateSpec{Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever,
		TerminationGracePeriodSeconds: ptr.To[int64](1), Containers: []corev1.Container{c}}}
}

func jobsCreate(t *testing.T, cs kubernetes.Interface, j *batchv1.Job) *batchv1.Job {
	t.Helper()
	out, err := cs.BatchV1().Jobs(j.Namespace).Create(context.Background(), j, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating job %s: %v", j.Name, err)
	}
	t.Cleanup(func() {
		p := metav1.DeletePropagationBackground
		_ = cs.BatchV1().Jobs(j.Namespace).Delete(context.Background(), j.Name, metav1.DeleteOptions{PropagationPolicy: &p})
	})
	return out
}

func jobsCondition(j *batchv1.Job, typ batchv1.JobConditionType) *batchv1.JobCondition {
	for i := range j.Status.Conditions {
		if c := &j.Status.Conditions[i]; c.Type == typ && c.Status == corev1.ConditionTrue {
			return c
		}
	}
	return nil
}

func jobsWaitCondition(t *testing.T, cs kubernetes.Interface, ns, name string, typ batchv1.JobConditionType, timeout time.Duration) *batchv1.Job {
	t.Helper()
	var j *batchv1.Job
	waitFor(t, timeout, "job "+name+" "+string(typ), func() (bool, error) {
		var err error
		j, err = cs.BatchV1().Jobs(ns).Get(context.Background(), name, metav1.GetOptions{})
		return err == nil && jobsCondition(j, typ) != nil, err
	})
	return j
}

func jobsPodActive(p *corev1.Pod) bool {
	return p.DeletionTimestamp == nil && p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed
}

// jobsParallel: completions 3, parallelism 2; a watch never sees more than
// 2 active pods; the Job completes with 3 succeeded.
func jobsParallel(t *testing.T, cs kubernetes.Interface) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w, err := cs.CoreV1().Pods("default").Watch(ctx, metav1.ListOptions{LabelSelector: batchv1.JobNameLabel + "=par"})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	maxActive := make(chan int, 1)
	go func() {
		active, peak := map[string]bool{}, 0
		for ev := range w.ResultChan() {
			p, ok := ev.Object.(*corev1.Pod)
			if !ok {
				continue
			}
			active[p.Name] = ev.Type != watch.Deleted && jobsPodActive(p)
			n := 0
			for _, a := range active {
				if a {
					n++
				}
			}
			peak = max(peak, n)
		}
		maxActive <- peak
	}()
	jobsCreate(t, cs, jobsSpec("default", "par", "sleep 2", 3, 2))
	j := jobsWaitCondition(t, cs, "default", "par", batchv1.JobComplete, 120*time.Second)
	if j.Status.Succeeded != 3 || j.Status.Failed != 0 || j.Status.CompletionTime == nil || jobsCondition(j, batchv1.JobSuccessCriteriaMet) == nil {
		t.Fatalf("status of a complete job: %+v", j.Status)
	}
	w.Stop()
	if peak := <-maxActive; peak > 2 || peak == 0 {
		t.Fatalf("watch saw %d pods active at once, parallelism is 2", peak)
	}
	pods, err := cs.CoreV1().Pods("default").List(context.Background(), metav1.ListOptions{LabelSelector: batchv1.JobNameLabel + "=par"})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pods.Items {
		if len(p.Finalizers) != 0 {
			t.Errorf("pod %s keeps finalizers %v after the job completed", p.Name, p.Finalizers)
		}
	}
}

// jobsIndexed: an Indexed Job's pods see their index in
// JOB_COMPLETION_INDEX (from the annotation, through the agent's downward
// API) and in their hostname; every index completes once.
func jobsIndexed(t *testing.T, cs kubernetes.Interface) {
	j := jobsSpec("default", "idx", `test "idx-$JOB_COMPLETION_INDEX" = "$(hostname)"`, 3, 3)
	j.Spec.CompletionMode = ptr.To(batchv1.IndexedCompletion)
	j.Spec.BackoffLimit = ptr.To[int32](0)
	jobsCreate(t, cs, j)
	got := jobsWaitCondition(t, cs, "default", "idx", batchv1.JobComplete, 120*time.Second)
	if got.Status.CompletedIndexes != "0-2" || got.Status.Succeeded != 3 {
		t.Fatalf("indexed job status: %+v", got.Status)
	}
}

// jobsBackoff: a pod that always fails, backoffLimit 1: two pods, then
// Failed with BackoffLimitExceeded.
func jobsBackoff(t *testing.T, cs kubernetes.Interface) {
	j := jobsSpec("default", "fails", "exit 3", 1, 1)
	j.Spec.BackoffLimit = ptr.To[int32](1)
	jobsCreate(t, cs, j)
	got := jobsWaitCondition(t, cs, "default", "fails", batchv1.JobFailed, 120*time.Second)
	if c := jobsCondition(got, batchv1.JobFailed); c.Reason != "BackoffLimitExceeded" || got.Status.Failed != 2 {
		t.Fatalf("failed job: condition %+v, failed %d (want BackoffLimitExceeded, 2)", c, got.Status.Failed)
	}
}

// jobsTTL: ttlSecondsAfterFinished 0 deletes the Job, and its pods go with it.
func jobsTTL(t *testing.T, cs kubernetes.Interface) {
	j := jobsSpec("default", "ttl", "true", 1, 1)
	j.Spec.TTLSecondsAfterFinished = ptr.To[int32](0)
	jobsCreate(t, cs, j)
	waitFor(t, 90*time.Second, "job ttl deleted after finishing", func() (bool, error) {
		_, err := cs.BatchV1().Jobs("default").Get(context.Background(), "ttl", metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})
	jobsWaitNoPods(t, cs, "default", batchv1.JobNameLabel+"=ttl")
	evs, err := cs.CoreV1().Events("default").List(context.Background(), metav1.ListOptions{
		FieldSelector: "involvedObject.kind=Job,involvedObject.name=ttl,reason=Completed"})
	if err != nil || len(evs.Items) == 0 {
		t.Fatalf("job ttl was deleted without a Completed event (%v)", err)
	}
}

func jobsWaitNoPods(t *testing.T, cs kubernetes.Interface, ns, selector string) {
	t.Helper()
	waitFor(t, 60*time.Second, "no pods for "+selector, func() (bool, error) {
		l, err := cs.CoreV1().Pods(ns).List(context.Background(), metav1.ListOptions{LabelSelector: selector})
		return err == nil && len(l.Items) == 0, err
	})
}

func jobsWaitRunning(t *testing.T, cs kubernetes.Interface, ns, selector string, n int) []corev1.Pod {
	t.Helper()
	var pods []corev1.Pod
	waitFor(t, 90*time.Second, fmt.Sprintf("%d running pods for %s", n, selector), func() (bool, error) {
		l, err := cs.CoreV1().Pods(ns).List(context.Background(), metav1.ListOptions{LabelSelector: selector})
		if err != nil {
			return false, err
		}
		pods = nil
		for _, p := range l.Items {
			if p.Status.Phase == corev1.PodRunning {
				pods = append(pods, p)
			}
		}
		return len(pods) == n, nil
	})
	return pods
}
