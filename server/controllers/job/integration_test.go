package job

import (
	"context"
	"strconv"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"

	"github.com/orch/orch/server/controllers/kit/kittest"
)

// startController runs the Job controller against a real in-process API server.
func startController(t *testing.T, base time.Duration) kubernetes.Interface {
	t.Helper()
	client, _ := kittest.Run(t, New, kittest.Before(func(c *Controller) { c.backoffBase = base }))
	return client
}

func testJob(name string, completions, parallelism int32) *batchv1.Job {
	return &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec: batchv1.JobSpec{
			Completions: ptr.To(completions), Parallelism: ptr.To(parallelism),
			Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
				RestartPolicy: corev1.RestartPolicyNever,
				Containers:    []corev1.Container{{Name: "c", Image: "busybox:1.36"}},
			}},
		},
	}
}

func listPods(t *testing.T, cs kubernetes.Interface, job string) []corev1.Pod {
	t.Helper()
	l, err := cs.CoreV1().Pods("default").List(context.Background(), metav1.ListOptions{LabelSelector: batchv1.JobNameLabel + "=" + job})
	if err != nil {
		t.Fatal(err)
	}
	return l.Items
}

func getJob(t *testing.T, cs kubernetes.Interface, name string) *batchv1.Job {
	t.Helper()
	j, err := cs.BatchV1().Jobs("default").Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return j
}

// finish sets a pod's phase as its kubelet would.
// finish sets pod p's phase, as a kubelet would: on the pod as it is now,
// since the controller may have changed it (e.g. its tracking finalizer)
// since p was listed.
func finish(t *testing.T, cs kubernetes.Interface, p corev1.Pod, phase corev1.PodPhase) {
	t.Helper()
	pods := cs.CoreV1().Pods("default")
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cur, err := pods.Get(context.Background(), p.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		cur.Status.Phase = phase
		_, err = pods.UpdateStatus(context.Background(), cur, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

func running(pods []corev1.Pod) []corev1.Pod {
	var out []corev1.Pod
	for _, p := range pods {
		if p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed && p.DeletionTimestamp == nil {
			out = append(out, p)
		}
	}
	return out
}

func TestJobCompletesWithParallelism(t *testing.T) {
	cs := startController(t, 10*time.Millisecond)
	if _, err := cs.BatchV1().Jobs("default").Create(context.Background(), testJob("pi", 3, 2), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for done := 0; done < 3; done++ {
		var act []corev1.Pod
		kittest.Until(t, "an active pod", func() bool { act = running(listPods(t, cs, "pi")); return len(act) > 0 })
		if len(act) > 2 {
			t.Fatalf("%d active pods, parallelism is 2", len(act))
		}
		if act[0].Finalizers[0] != batchv1.JobTrackingFinalizer || act[0].Labels[batchv1.ControllerUidLabel] == "" {
			t.Fatalf("pod lacks tracking finalizer or labels: %+v", act[0].ObjectMeta)
		}
		finish(t, cs, act[0], corev1.PodSucceeded)
		kittest.Until(t, "succeeded counted", func() bool { return getJob(t, cs, "pi").Status.Succeeded == int32(done+1) })
	}
	kittest.Until(t, "Complete", func() bool { return hasCondition(getJob(t, cs, "pi"), batchv1.JobComplete) })
	j := getJob(t, cs, "pi")
	if !hasCondition(j, batchv1.JobSuccessCriteriaMet) || j.Status.CompletionTime == nil || j.Status.StartTime == nil || j.Status.Active != 0 {
		t.Fatalf("status: %+v", j.Status)
	}
	for _, p := range listPods(t, cs, "pi") {
		if hasFinalizer(&p) {
			t.Fatalf("pod %s still has the tracking finalizer", p.Name)
		}
	}
}

func TestJobBackoffLimitExceeded(t *testing.T) {
	cs := startController(t, 10*time.Millisecond)
	j := testJob("bad", 1, 1)
	j.Spec.BackoffLimit = ptr.To[int32](1)
	if _, err := cs.BatchV1().Jobs("default").Create(context.Background(), j, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2; i++ {
		var act []corev1.Pod
		kittest.Until(t, "an active pod", func() bool { act = running(listPods(t, cs, "bad")); return len(act) == 1 })
		finish(t, cs, act[0], corev1.PodFailed)
		kittest.Until(t, "failure counted", func() bool { return getJob(t, cs, "bad").Status.Failed == int32(i+1) })
	}
	kittest.Until(t, "Failed", func() bool { return hasCondition(getJob(t, cs, "bad"), batchv1.JobFailed) })
	c := condition(getJob(t, cs, "bad"), batchv1.JobFailed)
	if c.Reason != "BackoffLimitExceeded" || !hasCondition(getJob(t, cs, "bad"), batchv1.JobFailureTarget) {
		t.Fatalf("condition: %+v", c)
	}
	if n := len(listPods(t, cs, "bad")); n != 2 {
		t.Fatalf("%d pods, want 2 (no re-create after failing)", n)
	}
}

func TestJobIndexed(t *testing.T) {
	cs := startController(t, 10*time.Millisecond)
	j := testJob("idx", 3, 3)
	j.Spec.CompletionMode = ptr.To(batchv1.IndexedCompletion)
	if _, err := cs.BatchV1().Jobs("default").Create(context.Background(), j, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var act []corev1.Pod
	kittest.Until(t, "3 pods", func() bool { act = running(listPods(t, cs, "idx")); return len(act) == 3 })
	seen := map[string]bool{}
	for _, p := range act {
		i := p.Annotations[batchv1.JobCompletionIndexAnnotation]
		seen[i] = true
		env := p.Spec.Containers[0].Env
		if len(env) == 0 || env[0].Name != "JOB_COMPLETION_INDEX" || p.Spec.Hostname != "idx-"+i {
			t.Fatalf("pod %s: env %+v hostname %q", p.Name, env, p.Spec.Hostname)
		}
	}
	for i := range 3 {
		if !seen[strconv.Itoa(i)] {
			t.Fatalf("index %d has no pod: %v", i, seen)
		}
	}
	for _, p := range act {
		finish(t, cs, p, corev1.PodSucceeded)
	}
	kittest.Until(t, "Complete", func() bool { return hasCondition(getJob(t, cs, "idx"), batchv1.JobComplete) })
	if got := getJob(t, cs, "idx").Status.CompletedIndexes; got != "0-2" {
		t.Fatalf("completedIndexes %q", got)
	}
}

func TestJobSuspendAndDeadline(t *testing.T) {
	cs := startController(t, 10*time.Millisecond)
	j := testJob("sus", 1, 1)
	j.Spec.Suspend = ptr.To(true)
	if _, err := cs.BatchV1().Jobs("default").Create(context.Background(), j, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	kittest.Until(t, "Suspended", func() bool { return hasCondition(getJob(t, cs, "sus"), batchv1.JobSuspended) })
	if n := len(listPods(t, cs, "sus")); n != 0 {
		t.Fatalf("suspended job has %d pods", n)
	}
	d := testJob("late", 1, 1)
	d.Spec.ActiveDeadlineSeconds = ptr.To[int64](1)
	if _, err := cs.BatchV1().Jobs("default").Create(context.Background(), d, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	kittest.Until(t, "DeadlineExceeded", func() bool {
		c := condition(getJob(t, cs, "late"), batchv1.JobFailed)
		return c != nil && c.Reason == "DeadlineExceeded"
	})
}

func TestIndexesRoundTrip(t *testing.T) {
	for _, s := range []string{"", "0", "0,1", "0-2", "1,3-5,7", "0,1,3,4,6-9"} {
		if got := formatIndexes(parseIndexes(s, 10)); got != s {
			t.Errorf("%q -> %q", s, got)
		}
	}
}

func TestBackoffDoubles(t *testing.T) {
	now := time.Unix(1000, 0)
	for _, tc := range []struct {
		failures int32
		want     time.Duration
	}{{0, 0}, {1, 10 * time.Second}, {2, 20 * time.Second}, {3, 40 * time.Second}, {20, 6 * time.Minute}} {
		if got := backoffLeft(tc.failures, now, now, backoffBase, backoffMax); got != tc.want {
			t.Errorf("%d failures: %v, want %v", tc.failures, got, tc.want)
		}
	}
}

// A Job managed by another controller gets neither pods nor status.
func TestJobManagedElsewhere(t *testing.T) {
	cs := startController(t, 10*time.Millisecond)
	j := testJob("external", 1, 1)
	j.Spec.ManagedBy = ptr.To("example.com/custom-job-controller")
	if _, err := cs.BatchV1().Jobs("default").Create(context.Background(), j, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// A Job created after it is synced after it: once that one has a pod,
	// the first one was seen and left alone.
	if _, err := cs.BatchV1().Jobs("default").Create(context.Background(), testJob("marker", 1, 1), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	kittest.Until(t, "marker job's pod", func() bool { return len(listPods(t, cs, "marker")) == 1 })
	if got := getJob(t, cs, "external"); len(listPods(t, cs, "external")) != 0 || got.Status.StartTime != nil || got.Status.Active != 0 {
		t.Fatalf("a Job managed elsewhere was synced: %+v", got.Status)
	}
}
