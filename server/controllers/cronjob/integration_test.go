package cronjob

import (
	"context"
	"sync"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/orch/orch/server/controllers/kit/kittest"
)

// fakeClock is a settable clock.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (f *fakeClock) now() time.Time  { f.mu.Lock(); defer f.mu.Unlock(); return f.t }
func (f *fakeClock) set(t time.Time) { f.mu.Lock(); f.t = t; f.mu.Unlock() }

func start(t *testing.T, clock *fakeClock) (kubernetes.Interface, *Controller) {
	t.Helper()
	return kittest.Run(t, New, kittest.Before(func(c *Controller) { c.now = clock.now }))
}

func jobs(t *testing.T, cs kubernetes.Interface) []batchv1.Job {
	l, err := cs.BatchV1().Jobs("default").List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return l.Items
}

func complete(t *testing.T, cs kubernetes.Interface, j batchv1.Job, typ batchv1.JobConditionType, at time.Time) {
	t.Helper()
	now := metav1.NewTime(at)
	j.Status.StartTime = &now
	j.Status.Conditions = []batchv1.JobCondition{{Type: typ, Status: corev1.ConditionTrue, LastTransitionTime: now}}
	if typ == batchv1.JobComplete {
		j.Status.CompletionTime = &now
		j.Status.Conditions = append(j.Status.Conditions, batchv1.JobCondition{Type: batchv1.JobSuccessCriteriaMet, Status: corev1.ConditionTrue, LastTransitionTime: now})
	} else {
		j.Status.Conditions = append(j.Status.Conditions, batchv1.JobCondition{Type: batchv1.JobFailureTarget, Status: corev1.ConditionTrue, LastTransitionTime: now})
	}
	if _, err := cs.BatchV1().Jobs("default").UpdateStatus(context.Background(), &j, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

func TestCronJobSchedulesForbidsAndPrunes(t *testing.T) {
	clock := &fakeClock{t: time.Now()}
	cs, c := start(t, clock)
	cj := &batchv1.CronJob{ObjectMeta: metav1.ObjectMeta{Name: "tick", Namespace: "default"}, Spec: batchv1.CronJobSpec{
		Schedule: "*/1 * * * *", ConcurrencyPolicy: batchv1.ForbidConcurrent, SuccessfulJobsHistoryLimit: ptr.To[int32](1),
		JobTemplate: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
			RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{{Name: "c", Image: "busybox:1.36"}}}}}},
	}}
	out, err := cs.BatchV1().CronJobs("default").Create(context.Background(), cj, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	created := out.CreationTimestamp.Time
	if n := len(jobs(t, cs)); n != 0 {
		t.Fatalf("%d jobs before the first schedule time", n)
	}
	first := created.Truncate(time.Minute).Add(time.Minute)
	clock.set(first.Add(time.Second))
	c.queue.Add("default/tick")
	kittest.Until(t, "first job", func() bool { return len(jobs(t, cs)) == 1 })
	j := jobs(t, cs)[0]
	if j.Name != jobName(out, first) || j.Annotations[scheduledTimestampAnnotation] == "" || metav1.GetControllerOf(&j).UID != out.UID {
		t.Fatalf("job %s %v", j.Name, j.ObjectMeta)
	}
	kittest.Until(t, "active and lastScheduleTime", func() bool {
		s, _ := cs.BatchV1().CronJobs("default").Get(context.Background(), "tick", metav1.GetOptions{})
		return len(s.Status.Active) == 1 && s.Status.LastScheduleTime != nil && s.Status.LastScheduleTime.Time.Equal(first)
	})
	// Forbid: the next time passes while the first Job runs.
	clock.set(first.Add(time.Minute + time.Second))
	c.queue.Add("default/tick")
	time.Sleep(300 * time.Millisecond)
	if n := len(jobs(t, cs)); n != 1 {
		t.Fatalf("Forbid: %d jobs", n)
	}
	complete(t, cs, j, batchv1.JobComplete, first.Add(30*time.Second))
	kittest.Until(t, "lastSuccessfulTime", func() bool {
		s, _ := cs.BatchV1().CronJobs("default").Get(context.Background(), "tick", metav1.GetOptions{})
		return s.Status.LastSuccessfulTime != nil && s.Status.LastSuccessfulTime.Time.Equal(first.Add(30*time.Second))
	})
	// The start Forbid skipped is made up for now that nothing runs.
	kittest.Until(t, "second job", func() bool {
		for _, x := range jobs(t, cs) {
			if x.Name == jobName(out, first.Add(time.Minute)) {
				return true
			}
		}
		return false
	})
	for _, x := range jobs(t, cs) {
		if x.Name != j.Name {
			complete(t, cs, x, batchv1.JobComplete, first.Add(time.Minute+10*time.Second))
		}
	}
	kittest.Until(t, "history limit 1 deletes the first job", func() bool {
		l := jobs(t, cs)
		return len(l) == 1 && l[0].Name != j.Name
	})
}
