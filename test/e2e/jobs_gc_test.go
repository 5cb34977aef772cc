package e2e

import (
	"context"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
)

// jobsPropagation: a Job deleted in the foreground stays (with the
// foregroundDeletion finalizer) until its running pods are gone; one
// deleted with Orphan goes at once and leaves its pods running, without
// owner references and without the job-tracking finalizer.
func jobsPropagation(t *testing.T, cs kubernetes.Interface) {
	ctx := context.Background()
	jobsCreate(t, cs, jobsSpec("default", "fg", "sleep 3600", 2, 2))
	jobsWaitRunning(t, cs, "default", batchv1.JobNameLabel+"=fg", 2)
	fg := metav1.DeletePropagationForeground
	if err := cs.BatchV1().Jobs("default").Delete(ctx, "fg", metav1.DeleteOptions{PropagationPolicy: &fg}); err != nil {
		t.Fatal(err)
	}
	j, err := cs.BatchV1().Jobs("default").Get(ctx, "fg", metav1.GetOptions{})
	if err != nil || j.DeletionTimestamp == nil || !containsString(j.Finalizers, metav1.FinalizerDeleteDependents) {
		t.Fatalf("foreground-deleted job should wait with the foregroundDeletion finalizer: %v %+v", err, j)
	}
	waitFor(t, 90*time.Second, "job fg gone after its pods", func() (bool, error) {
		_, err := cs.BatchV1().Jobs("default").Get(ctx, "fg", metav1.GetOptions{})
		if !apierrors.IsNotFound(err) {
			return false, err
		}
		l, err := cs.CoreV1().Pods("default").List(ctx, metav1.ListOptions{LabelSelector: batchv1.JobNameLabel + "=fg"})
		if err == nil && len(l.Items) != 0 {
			t.Errorf("job fg deleted while %d of its pods remain", len(l.Items))
			return true, nil
		}
		return true, err
	})

	jobsCreate(t, cs, jobsSpec("default", "orph", "sleep 3600", 1, 1))
	jobsWaitRunning(t, cs, "default", batchv1.JobNameLabel+"=orph", 1)
	or := metav1.DeletePropagationOrphan
	if err := cs.BatchV1().Jobs("default").Delete(ctx, "orph", metav1.DeleteOptions{PropagationPolicy: &or}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 60*time.Second, "job orph gone", func() (bool, error) {
		_, err := cs.BatchV1().Jobs("default").Get(ctx, "orph", metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})
	sel := batchv1.JobNameLabel + "=orph"
	waitFor(t, 60*time.Second, "orphaned pod without owner or finalizer", func() (bool, error) {
		l, err := cs.CoreV1().Pods("default").List(ctx, metav1.ListOptions{LabelSelector: sel})
		if err != nil || len(l.Items) != 1 {
			return false, err
		}
		p := l.Items[0]
		return len(p.OwnerReferences) == 0 && len(p.Finalizers) == 0 && p.DeletionTimestamp == nil && p.Status.Phase == corev1.PodRunning, nil
	})
	if err := cs.CoreV1().Pods("default").DeleteCollection(ctx, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](1)},
		metav1.ListOptions{LabelSelector: sel}); err != nil {
		t.Fatal(err)
	}
	jobsWaitNoPods(t, cs, "default", sel)
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// jobsNamespaceDeletion: a namespace with a running pod, a configmap and a
// running Job goes Terminating, everything in it is deleted (the pods
// gracefully, by the agent), then the namespace disappears.
func jobsNamespaceDeletion(t *testing.T, cs kubernetes.Interface) {
	ctx := context.Background()
	const ns = "jobs-doomed"
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.CoreV1().Namespaces().Delete(context.Background(), ns, metav1.DeleteOptions{}) })
	if _, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cm"}, Data: map[string]string{"a": "b"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	tpl := jobsPodTemplate("sleep 3600")
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "lone", Namespace: ns, Labels: map[string]string{"app": "lone"}}, Spec: tpl.Spec}
	pod.Spec.RestartPolicy = corev1.RestartPolicyAlways
	if _, err := cs.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	jobsCreate(t, cs, jobsSpec(ns, "work", "sleep 3600", 1, 1))
	jobsWaitRunning(t, cs, ns, "app=lone", 1)
	jobsWaitRunning(t, cs, ns, batchv1.JobNameLabel+"=work", 1)

	if err := cs.CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	got, err := cs.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
	if err != nil || got.Status.Phase != corev1.NamespaceTerminating || got.DeletionTimestamp == nil {
		t.Fatalf("deleted namespace should be Terminating: %v %+v", err, got)
	}
	_, err = cs.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "late"}}, metav1.CreateOptions{})
	if !apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause) {
		t.Errorf("creating in a terminating namespace: %v, want Forbidden with NamespaceTerminating", err)
	}
	waitFor(t, 120*time.Second, "namespace "+ns+" gone", func() (bool, error) {
		_, err := cs.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})
	for what, list := range map[string]func() (int, error){
		"pods": func() (int, error) {
			l, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
			return len(l.Items), err
		},
		"configmaps": func() (int, error) {
			l, err := cs.CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{})
			return len(l.Items), err
		},
		"jobs": func() (int, error) {
			l, err := cs.BatchV1().Jobs(ns).List(ctx, metav1.ListOptions{})
			return len(l.Items), err
		},
	} {
		if n, err := list(); err != nil || n != 0 {
			t.Errorf("%s left in the deleted namespace: %d (%v)", what, n, err)
		}
	}
}

// jobsCron: a CronJob `*/1 * * * *` creates its Job within ~70 s, the Job
// completes and the CronJob records it.
func jobsCron(t *testing.T, cs kubernetes.Interface) {
	ctx := context.Background()
	cj := &batchv1.CronJob{ObjectMeta: metav1.ObjectMeta{Name: "every-minute", Namespace: "default"}, Spec: batchv1.CronJobSpec{
		Schedule: "*/1 * * * *", ConcurrencyPolicy: batchv1.ForbidConcurrent,
		JobTemplate: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{Template: jobsPodTemplate("echo tick")}},
	}}
	if _, err := cs.BatchV1().CronJobs("default").Create(ctx, cj, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		p := metav1.DeletePropagationBackground
		_ = cs.BatchV1().CronJobs("default").Delete(context.Background(), "every-minute", metav1.DeleteOptions{PropagationPolicy: &p})
	})
	var job string
	waitFor(t, 75*time.Second, "the cronjob's first job", func() (bool, error) {
		l, err := cs.BatchV1().Jobs("default").List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		for _, j := range l.Items {
			if ref := metav1.GetControllerOf(&j); ref != nil && ref.Kind == "CronJob" && ref.Name == "every-minute" {
				job = j.Name
				return true, nil
			}
		}
		return false, nil
	})
	jobsWaitCondition(t, cs, "default", job, batchv1.JobComplete, 60*time.Second)
	waitFor(t, 30*time.Second, "lastSuccessfulTime", func() (bool, error) {
		c, err := cs.BatchV1().CronJobs("default").Get(ctx, "every-minute", metav1.GetOptions{})
		return err == nil && c.Status.LastSuccessfulTime != nil && c.Status.LastScheduleTime != nil, err
	})
}
