package job

import (
	"context"
	"maps"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
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
		queue:       kc.NewQueue("job"),
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
		AddFunc:    func(obj any) { c.podEvent(nil, obj, true, false) },
		UpdateFunc: func(old, obj any) { c.podEvent(old, obj, false, false) },
		DeleteFunc: func(obj any) { c.podEvent(nil, obj, false, true) },
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
	c.forgetBackoff(key)
	pods, _ := c.pods.Pods(j.Namespace).List(labelsAll)
	for _, p := range pods {
		if ref := metav1.GetControllerOf(p); ref != nil && ref.UID == j.UID && hasFinalizer(p) {
			c.queue.Add(orphanPrefix + p.Namespace + "/" + p.Name)
		}
	}
}

// podEvent lowers expectations and enqueues the owning Job, the Job a pod
// was released from, the Jobs that may adopt an orphan, and orphans that
// still hold the tracking finalizer.
func (c *Controller) podEvent(oldObj, obj any, added, deleted bool) {
	p := asPod(obj)
	if p == nil {
		return
	}
	ref := jobRef(p)
	if old := asPod(oldObj); old != nil {
		if oldRef := jobRef(old); oldRef != nil && (ref == nil || ref.UID != oldRef.UID) {
			key := p.Namespace + "/" + oldRef.Name
			c.exp.finalizerRemoved(key, oldRef.UID, p.UID)
			c.queue.Add(key)
		}
	}
	if ref == nil {
		c.orphanEvent(oldObj, p, added, deleted)
		return
	}
	key := p.Namespace + "/" + ref.Name
	switch {
	case added:
		c.exp.observe(key, ref.UID, true)
	case deleted || p.DeletionTimestamp != nil:
		c.exp.observeDeleting(key, ref.UID, p.UID)
	}
	if deleted || !hasFinalizer(p) {
		c.exp.finalizerRemoved(key, ref.UID, p.UID)
	}
	j, err := c.jobs.Jobs(p.Namespace).Get(ref.Name)
	if (err != nil || j.UID != ref.UID) && hasFinalizer(p) && !deleted {
		c.queue.Add(orphanPrefix + p.Namespace + "/" + p.Name)
		return
	}
	c.queue.Add(key)
}

// orphanEvent handles a pod no Job controls: its tracking finalizer goes,
// and when it is new or its labels or owner changed, the Jobs whose
// selector matches it may adopt it.
func (c *Controller) orphanEvent(oldObj any, p *corev1.Pod, added, deleted bool) {
	if deleted {
		return
	}
	if hasFinalizer(p) {
		c.queue.Add(orphanPrefix + p.Namespace + "/" + p.Name)
	}
	if old := asPod(oldObj); !added && (old == nil || (maps.Equal(old.Labels, p.Labels) && jobRef(old) == nil)) {
		return
	}
	jobs, err := c.jobs.Jobs(p.Namespace).List(labelsAll)
	if err != nil {
		return
	}
	for _, j := range jobs {
		sel, err := metav1.LabelSelectorAsSelector(j.Spec.Selector)
		if err == nil && !sel.Empty() && sel.Matches(labels.Set(p.Labels)) {
			c.queue.Add(j.Namespace + "/" + j.Name)
		}
	}
}

// jobRef is the pod's controller reference when it is a batch Job.
func jobRef(p *corev1.Pod) *metav1.OwnerReference {
	ref := metav1.GetControllerOfNoCopy(p)
	if ref == nil || ref.Kind != "Job" || !strings.HasPrefix(ref.APIVersion, "batch/") {
		return nil
	}
	return ref
}

func asPod(obj any) *corev1.Pod {
	switch o := obj.(type) {
	case *corev1.Pod:
		return o
	case cache.DeletedFinalStateUnknown:
		p, _ := o.Obj.(*corev1.Pod)
		return p
	}
	return nil
}

func (c *Controller) backoffOf(key string) backoffRecord {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.backoff[key]
}

func (c *Controller) setBackoff(key string, r backoffRecord) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.backoff[key] = r
}

func (c *Controller) forgetBackoff(key string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.backoff, key)
}
