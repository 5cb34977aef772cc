package cronjob

import (
	"context"
	"time"

	"go.uber.org/zap"
	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	batchlisters "k8s.io/client-go/listers/batch/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"

	"github.com/orch/orch/server/controllers/kit"
)

// Controller reconciles CronJobs.
type Controller struct {
	client   kubernetes.Interface
	cronJobs batchlisters.CronJobLister
	jobs     batchlisters.JobLister
	synced   []cache.InformerSynced
	queue    kit.Queue
	recorder record.EventRecorder
	log      *zap.Logger
	now      func() time.Time
}

// New registers the CronJob and Job informers and handlers on kc.
func New(kc *kit.Context) (*Controller, error) {
	cjInf := kc.Informers.Batch().V1().CronJobs()
	jobInf := kc.Informers.Batch().V1().Jobs()
	c := &Controller{
		client: kc.Client, cronJobs: cjInf.Lister(), jobs: jobInf.Lister(),
		synced:   []cache.InformerSynced{cjInf.Informer().HasSynced, jobInf.Informer().HasSynced},
		queue:    kc.NewQueue("cronjob"),
		recorder: kc.Recorder("cronjob-controller"),
		log:      kc.Logger.Named("cronjob"),
		now:      time.Now,
	}
	if _, err := cjInf.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { kit.Enqueue(c.queue, obj) },
		UpdateFunc: func(_, obj any) { kit.Enqueue(c.queue, obj) },
	}); err != nil {
		return nil, err
	}
	_, err := jobInf.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    c.jobEvent,
		UpdateFunc: func(_, obj any) { c.jobEvent(obj) },
		DeleteFunc: c.jobEvent,
	})
	return c, err
}

// Run reconciles until ctx ends.
func (c *Controller) Run(ctx context.Context) error {
	if !kit.WaitForSync(ctx, c.synced...) {
		return ctx.Err()
	}
	kit.RunWorkers(ctx, c.queue, 2, c.sync, c.log)
	return nil
}

// jobEvent enqueues the CronJob controlling a Job.
func (c *Controller) jobEvent(obj any) {
	if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = tomb.Obj
	}
	j, ok := obj.(*batchv1.Job)
	if !ok {
		return
	}
	if ref := metav1.GetControllerOf(j); ref != nil && ref.Kind == "CronJob" {
		c.queue.Add(j.Namespace + "/" + ref.Name)
	}
}
