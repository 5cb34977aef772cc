package job

import (
	"context"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	batchlisters "k8s.io/client-go/listers/batch/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"

	"github.com/orch/orch/server/controllers/kit"
)

// orphanPrefix marks queue keys of pods (not Jobs) whose finalizer may need removal.
const orphanPrefix = "pod:"

// workers is how many keys are reconciled at once.
const workers = 2

// Controller reconciles Jobs.
type Controller struct {
	client   kubernetes.Interface
	jobs     batchlisters.JobLister
	pods     corelisters.PodLister
	synced   []cache.InformerSynced
	queue    kit.Queue
	recorder record.EventRecorder
	log      *zap.Logger
	now      func() time.Time

	exp     *expectations
	mu      sync.Mutex
	backoff map[string]backoffRecord // job key -> consecutive failures
	// backoffBase is the first re-create delay after a failure (doubling).
	backoffBase time.Duration
}

// New registers the Job and Pod informers and handlers on kc.
func New(kc *kit.Context) (*Controller, error) {
	jobInf := kc.Informers.Batch().V1().Jobs()
	podInf := kc.Informers.Core().V1().Pods()
	c := &Controller{
		client: kc.Client, jobs: jobInf.Lister(), pods: podInf.Lister(),
		synced:      []cache.InformerSynced{jobInf.Informer().HasSynced, podInf.Informer().HasSynced},
		queue:       kit.NewQueue("job"),
		recorder:    kc.Recorder("job-controller"),
		log:         kc.Logger.Named("job"),
		now:         time.Now,
		exp:         newExpectations(),
		backoff:     map[string]backoffRecord{},
		backoffBase: backoffBase,
	}
	if _, err := jobInf.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { kit.Enqueue(c.queue, obj) },
		UpdateFunc: func(_, obj any) { kit.Enqueue(c.queue, obj) },
		DeleteFunc: c.jobDeleted,
	}); err != nil {
		return nil, err
	}
	if _, err := podInf.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { c.podEvent(obj, true, false) },
		UpdateFunc: func(_, obj any) { c.podEvent(obj, false, false) },
		DeleteFunc: func(obj any) { c.podEvent(obj, false, true) },
	}); err != nil {
		return nil, err
	}
	return c, nil
}

// Run reconciles until ctx ends.
func (c *Controller) Run(ctx context.Context) error {
	if !kit.WaitForSync(ctx, c.synced...) {
		return ctx.Err()
	}
	kit.RunWorkers(ctx, c.queue, workers, c.sync, c.log)
	return nil
}

func (c *Controller) sync(ctx context.Context, key string) error {
	if pod, ok := strings.CutPrefix(key, orphanPrefix); ok {
		return c.syncOrphanPod(ctx, pod)
	}
	return c.syncJob(ctx, key)
}

// jobDeleted forgets the job and looks at its pods (their finalizers go).
func (c *Controller) jobDeleted(obj any) {
	j, ok := obj.(*batchv1.Job)
	if !ok {
		tomb, ok := obj.(cache.DeletedFinalStateUnknown)
		if !ok {
			return
		}
		if j, ok = tomb.Obj.(*batchv1.Job); !ok {
			return
		}
	}
	key := j.Namespace + "/" + j.Name
	c.exp.forget(key)
	c.mu.Lock()
	delete(c.backoff, key)
	c.mu.Unlock()
	pods, _ := c.pods.Pods(j.Namespace).List(labelsAll)
	for _, p := range pods {
		if ref := metav1.GetControllerOf(p); ref != nil && ref.UID == j.UID && hasFinalizer(p) {
			c.queue.Add(orphanPrefix + p.Namespace + "/" + p.Name)
		}
	}
}

// podEvent lowers expectations and enqueues the owning Job (or the pod
// itself when its Job is unknown).
func (c *Controller) podEvent(obj any, added, deleted bool) {
	p, ok := obj.(*corev1.Pod)
	if !ok {
		tomb, ok := obj.(cache.DeletedFinalStateUnknown)
		if !ok {
			return
		}
		if p, ok = tomb.Obj.(*corev1.Pod); !ok {
			return
		}
	}
	ref := metav1.GetControllerOf(p)
	if ref == nil || ref.Kind != "Job" || !strings.HasPrefix(ref.APIVersion, "batch/") {
		if hasFinalizer(p) && !deleted {
			c.queue.Add(orphanPrefix + p.Namespace + "/" + p.Name)
		}
		return
	}
	key := p.Namespace + "/" + ref.Name
	switch {
	case added:
		c.exp.observe(key, ref.UID, true)
	case deleted || p.DeletionTimestamp != nil:
		c.exp.observeDeleting(key, ref.UID, p.UID)
	}
	j, err := c.jobs.Jobs(p.Namespace).Get(ref.Name)
	if (err != nil || j.UID != ref.UID) && hasFinalizer(p) && !deleted {
		c.queue.Add(orphanPrefix + p.Namespace + "/" + p.Name)
		return
	}
	c.queue.Add(key)
}
