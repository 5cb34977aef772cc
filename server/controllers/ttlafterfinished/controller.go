package ttlafterfinished

import (
	"context"
	"fmt"
	"time"

	"go.uber.org/zap"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	batchlisters "k8s.io/client-go/listers/batch/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/orch/orch/server/controllers/kit"
)

// Controller deletes finished Jobs whose TTL expired.
type Controller struct {
	client kubernetes.Interface
	jobs   batchlisters.JobLister
	synced cache.InformerSynced
	queue  kit.Queue
	log    *zap.Logger
	now    func() time.Time
}

// New registers the Job informer handlers on kc.
func New(kc *kit.Context) (*Controller, error) {
	inf := kc.Informers.Batch().V1().Jobs()
	c := &Controller{client: kc.Client, jobs: inf.Lister(), synced: inf.Informer().HasSynced,
		queue: kc.NewQueue("ttl-after-finished"), log: kc.Logger.Named("ttl-after-finished"), now: time.Now}
	enqueue := func(obj any) {
		if j, ok := obj.(*batchv1.Job); ok && j.DeletionTimestamp == nil && j.Spec.TTLSecondsAfterFinished != nil {
			kit.Enqueue(c.queue, j)
		}
	}
	_, err := inf.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    enqueue,
		UpdateFunc: func(_, obj any) { enqueue(obj) },
	})
	return c, err
}

// Run reconciles until ctx ends.
func (c *Controller) Run(ctx context.Context) error {
	if !kit.WaitForSync(ctx, c.synced) {
		return ctx.Err()
	}
	kit.RunWorkers(ctx, c.queue, 1, c.sync, c.log)
	return nil
}

func (c *Controller) sync(ctx context.Context, key string) error {
	ns, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return nil
	}
	j, err := c.jobs.Jobs(ns).Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	} else if err != nil {
		return err
	}
	left, expired := timeLeft(j, c.now())
	if !expired {
		if left > 0 {
			c.queue.AddAfter(key, left)
		}
		return nil
	}
	// Re-check live: the TTL may have been changed since the cache saw it.
	fresh, err := c.client.BatchV1().Jobs(ns).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	} else if err != nil {
		return fmt.Errorf("get job %s: %w", key, err)
	}
	if left, expired = timeLeft(fresh, c.now()); !expired {
		if left > 0 {
			c.queue.AddAfter(key, left)
		}
		return nil
	}
	p := metav1.DeletePropagationBackground
	err = c.client.BatchV1().Jobs(ns).Delete(ctx, name, metav1.DeleteOptions{PropagationPolicy: &p,
		Preconditions: &metav1.Preconditions{UID: &fresh.UID, ResourceVersion: &fresh.ResourceVersion}})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("delete expired job %s: %w", key, err)
	}
	c.log.Debug("deleted finished job after its TTL", zap.String("job", key))
	return nil
}

// timeLeft returns how long until j expires; expired is true when it has.
// A Job that is not finished or has no TTL never expires (0, false).
func timeLeft(j *batchv1.Job, now time.Time) (time.Duration, bool) {
	if j.Spec.TTLSecondsAfterFinished == nil || j.DeletionTimestamp != nil {
		return 0, false
	}
	finished := finishTime(j)
	if finished.IsZero() {
		return 0, false
	}
	left := finished.Add(time.Duration(*j.Spec.TTLSecondsAfterFinished) * time.Second).Sub(now)
	if left <= 0 {
		return 0, true
	}
	return left, false
}

// finishTime is when the Complete or Failed condition became true.
func finishTime(j *batchv1.Job) time.Time {
	for _, c := range j.Status.Conditions {
		if (c.Type == batchv1.JobComplete || c.Type == batchv1.JobFailed) && c.Status == corev1.ConditionTrue {
			if !c.LastTransitionTime.IsZero() {
				return c.LastTransitionTime.Time
			}
			if j.Status.CompletionTime != nil {
				return j.Status.CompletionTime.Time
			}
			return time.Time{}.Add(1) // finished, time unknown: expire now
		}
	}
	return time.Time{}
}
