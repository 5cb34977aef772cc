package cronjob

import (
	"context"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/orch/orch/server/controllers/kit/kittest"
)

func createCronJob(t *testing.T, cs kubernetes.Interface, name string, mutate func(*batchv1.CronJobSpec)) *batchv1.CronJob {
	t.Helper()
	cj := &batchv1.CronJob{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"}, Spec: batchv1.CronJobSpec{
		Schedule: "*/1 * * * *",
		JobTemplate: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
			RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{{Name: "c", Image: "busybox:1.36"}}}}}},
	}}
	mutate(&cj.Spec)
	out, err := cs.BatchV1().CronJobs("default").Create(context.Background(), cj, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func hasEvent(t *testing.T, cs kubernetes.Interface, reason string) bool {
	l, err := cs.CoreV1().Events("default").List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range l.Items {
		if e.Reason == reason {
			return true
		}
	}
	return false
}

// TestStartingDeadlineMissed: a schedule time older than
// startingDeadlineSeconds is not started late (upstream counts missed
// times only from now-startingDeadlineSeconds).
func TestStartingDeadlineMissed(t *testing.T) {
	clock := &fakeClock{t: time.Now()}
	cs, c := start(t, clock)
	cj := createCronJob(t, cs, "late", func(s *batchv1.CronJobSpec) { s.StartingDeadlineSeconds = ptr.To[int64](10) })
	first := cj.CreationTimestamp.Truncate(time.Minute).Add(time.Minute)
	clock.set(first.Add(30 * time.Second))
	kittest.Until(t, "cronjob in the cache", func() bool { _, err := c.cronJobs.CronJobs("default").Get("late"); return err == nil })
	kittest.Until(t, "a clean sync", func() bool { return c.sync(context.Background(), "default/late") == nil })
	if n := len(jobs(t, cs)); n != 0 {
		t.Fatalf("%d jobs started after the deadline", n)
	}
	clock.set(first.Add(time.Minute + 5*time.Second)) // within the deadline of the next time
	c.queue.Add("default/late")
	kittest.Until(t, "the job of the next time", func() bool {
		l := jobs(t, cs)
		return len(l) == 1 && l[0].Name == jobName(cj, first.Add(time.Minute))
	})
}

// TestReplaceDeletesRunningJob: Replace deletes the running Job before
// starting the next one.
func TestReplaceDeletesRunningJob(t *testing.T) {
	clock := &fakeClock{t: time.Now()}
	cs, c := start(t, clock)
	cj := createCronJob(t, cs, "repl", func(s *batchv1.CronJobSpec) { s.ConcurrencyPolicy = batchv1.ReplaceConcurrent })
	first := cj.CreationTimestamp.Truncate(time.Minute).Add(time.Minute)
	clock.set(first.Add(time.Second))
	c.queue.Add("default/repl")
	kittest.Until(t, "first job", func() bool { return len(jobs(t, cs)) == 1 })
	clock.set(first.Add(time.Minute + time.Second))
	c.queue.Add("default/repl")
	kittest.Until(t, "second job replaces the first", func() bool {
		l := jobs(t, cs)
		return len(l) == 1 && l[0].Name == jobName(cj, first.Add(time.Minute))
	})
	if !hasEvent(t, cs, "SuccessfulDelete") {
		t.Fatal("no SuccessfulDelete event")
	}
}
