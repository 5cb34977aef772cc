package resourcequota

import (
	"context"
	"fmt"
	"reflect"

	"go.uber.org/zap"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/orch/orch/server/controllers/kit"
	"github.com/orch/orch/server/quota"
)

const name = "resourcequota"

// counted are the resources whose objects are recounted, with their types.
var counted = []struct {
	gvr schema.GroupVersionResource
	obj runtime.Object
}{
	{corev1.SchemeGroupVersion.WithResource("pods"), &corev1.Pod{}},
	{corev1.SchemeGroupVersion.WithResource("services"), &corev1.Service{}},
	{corev1.SchemeGroupVersion.WithResource("configmaps"), &corev1.ConfigMap{}},
	{corev1.SchemeGroupVersion.WithResource("secrets"), &corev1.Secret{}},
	{corev1.SchemeGroupVersion.WithResource("persistentvolumeclaims"), &corev1.PersistentVolumeClaim{}},
	{corev1.SchemeGroupVersion.WithResource("replicationcontrollers"), &corev1.ReplicationController{}},
	{corev1.SchemeGroupVersion.WithResource("podtemplates"), &corev1.PodTemplate{}},
	{corev1.SchemeGroupVersion.WithResource("resourcequotas"), &corev1.ResourceQuota{}},
	{appsv1.SchemeGroupVersion.WithResource("deployments"), &appsv1.Deployment{}},
	{appsv1.SchemeGroupVersion.WithResource("replicasets"), &appsv1.ReplicaSet{}},
	{appsv1.SchemeGroupVersion.WithResource("statefulsets"), &appsv1.StatefulSet{}},
	{appsv1.SchemeGroupVersion.WithResource("daemonsets"), &appsv1.DaemonSet{}},
	{batchv1.SchemeGroupVersion.WithResource("jobs"), &batchv1.Job{}},
	{batchv1.SchemeGroupVersion.WithResource("cronjobs"), &batchv1.CronJob{}},
}

// Controller recounts quota usage.
type Controller struct {
	client  kubernetes.Interface
	quotas  corelisters.ResourceQuotaLister
	objects map[schema.GroupResource]informers.GenericInformer
	synced  []cache.InformerSynced
	queue   kit.Queue
	log     *zap.Logger
}

// New registers the informers and handlers on kc.
func New(kc *kit.Context) (*Controller, error) {
	qi := kc.Informers.Core().V1().ResourceQuotas()
	c := &Controller{client: kc.Client, quotas: qi.Lister(), objects: map[schema.GroupResource]informers.GenericInformer{},
		synced: []cache.InformerSynced{qi.Informer().HasSynced}, queue: kc.NewQueue(name), log: kc.Logger.Named(name)}
	if _, err := qi.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) { kit.Enqueue(c.queue, obj) }, UpdateFunc: func(_, obj any) { kit.Enqueue(c.queue, obj) },
	}); err != nil {
		return nil, err
	}
	for _, r := range counted {
		if quota.CountOnly(r.gvr.GroupResource()) && kc.Metadata != nil {
			continue // chosen in countOnly, once every controller has asked for its informers
		}
		gi, err := kc.Informers.ForResource(r.gvr)
		if err != nil {
			return nil, fmt.Errorf("resourcequota: informer for %v: %w", r.gvr, err)
		}
		if err := c.count(r.gvr, gi); err != nil {
			return nil, err
		}
	}
	if kc.Metadata != nil {
		kc.BeforeStart(func(context.Context) { c.countOnly(kc) })
	}
	return c, nil
}

// countOnly picks the informers of the resources whose objects are only
// counted: the typed informer another controller caches anyway, else a
// metadata-only one (shared with the garbage collector), so that counting
// ConfigMaps and Secrets does not hold their data. It runs just before the
// informers start, when every controller has asked for its own.
func (c *Controller) countOnly(kc *kit.Context) {
	for _, r := range counted {
		if !quota.CountOnly(r.gvr.GroupResource()) {
			continue
		}
		gi, err := kc.CachedOrMetadataInformer(r.gvr, reflect.TypeOf(r.obj))
		if err == nil {
			err = c.count(r.gvr, gi)
		}
		if err != nil {
			c.log.Error("no informer: quota usage of this resource is not recounted", zap.Stringer("resource", r.gvr), zap.Error(err))
		}
	}
}

// count recounts the namespace's quotas when an object of gvr changes.
func (c *Controller) count(gvr schema.GroupVersionResource, gi informers.GenericInformer) error {
	onChange := func(obj any) { c.enqueueNamespace(obj) }
	c.objects[gvr.GroupResource()] = gi
	c.synced = append(c.synced, gi.Informer().HasSynced)
	_, err := gi.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: onChange, UpdateFunc: func(_, obj any) { onChange(obj) }, DeleteFunc: onChange,
	})
	return err
}

// Run runs the workers until ctx ends.
func (c *Controller) Run(ctx context.Context) error {
	if !kit.WaitForSync(ctx, c.synced...) {
		return ctx.Err()
	}
	kit.RunWorkers(ctx, c.queue, 1, c.sync, c.log)
	return nil
}

func (c *Controller) enqueueNamespace(obj any) {
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = t.Obj
	}
	m, err := meta.Accessor(obj)
	if err != nil {
		return
	}
	qs, _ := c.quotas.ResourceQuotas(m.GetNamespace()).List(labels.Everything())
	for _, q := range qs {
		kit.Enqueue(c.queue, q)
	}
}

func (c *Controller) sync(ctx context.Context, key string) error {
	ns, qname, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return nil
	}
	q, err := c.quotas.ResourceQuotas(ns).Get(qname)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	used, err := c.recount(q, func(gr schema.GroupResource) ([]runtime.Object, error) {
		return c.objects[gr].Lister().ByNamespace(q.Namespace).List(labels.Everything())
	})
	if err != nil {
		return err
	}
	if lowers(used, q.Status.Used) {
		if used, err = c.recount(q, func(gr schema.GroupResource) ([]runtime.Object, error) {
			return listFresh(ctx, c.client, gr, q.Namespace)
		}); err != nil {
			return err
		}
	}
	upd := q.DeepCopy()
	upd.Status.Hard, upd.Status.Used = q.Spec.Hard, used
	if apiequality.Semantic.DeepEqual(upd.Status, q.Status) {
		return nil
	}
	if _, err := c.client.CoreV1().ResourceQuotas(ns).UpdateStatus(ctx, upd, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("updating status of ResourceQuota %s: %w", key, err)
	}
	return nil
}

// recount sums the usage of the namespace's objects, listed by list, for
// q's hard names.
func (c *Controller) recount(q *corev1.ResourceQuota, list func(schema.GroupResource) ([]runtime.Object, error)) (corev1.ResourceList, error) {
	used := corev1.ResourceList{}
	for name := range q.Spec.Hard {
		used[name] = *resource.NewQuantity(0, resource.DecimalSI)
	}
	for gr := range c.objects {
		objs, err := list(gr)
		if err != nil {
			return nil, err
		}
		for _, o := range objs {
			if !quota.Matches(q, o) {
				continue
			}
			for name, v := range quota.Usage(gr, o) {
				if cur, ok := used[name]; ok {
					cur.Add(v)
					used[name] = cur
				}
			}
		}
	}
	return used, nil
}
