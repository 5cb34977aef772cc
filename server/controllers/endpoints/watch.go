package endpoints

import (
	"context"

	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/orch/orch/server/controllers/kit"
)

// base is what both controllers share: services, pods, a queue of Service
// keys and the handlers that fill it.
type base struct {
	services corelisters.ServiceLister
	pods     corelisters.PodLister
	synced   []cache.InformerSynced
	queue    kit.Queue
	log      *zap.Logger
}

func newBase(kc *kit.Context, name string) (*base, error) {
	svcs, pods := kc.Informers.Core().V1().Services(), kc.Informers.Core().V1().Pods()
	b := &base{services: svcs.Lister(), pods: pods.Lister(), queue: kc.NewQueue(name), log: kc.Logger.Named(name),
		synced: []cache.InformerSynced{svcs.Informer().HasSynced, pods.Informer().HasSynced}}
	if _, err := svcs.Informer().AddEventHandler(kit.EnqueueHandler(b.queue)); err != nil {
		return nil, err
	}
	_, err := pods.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) { b.enqueuePodServices(obj, nil) },
		UpdateFunc: func(old, obj any) {
			b.enqueuePodServices(obj, old)
		},
		DeleteFunc: func(obj any) { b.enqueuePodServices(obj, nil) },
	})
	return b, err
}

// enqueuePodServices enqueues the Services selecting the pod (now or, on
// a label change, before).
func (b *base) enqueuePodServices(obj, old any) {
	for _, o := range []any{obj, old} {
		if t, ok := o.(cache.DeletedFinalStateUnknown); ok {
			o = t.Obj
		}
		pod, ok := o.(*corev1.Pod)
		if !ok {
			continue
		}
		svcs, err := b.services.Services(pod.Namespace).List(labels.Everything())
		if err != nil {
			continue
		}
		for _, s := range svcs {
			if s.Spec.Selector != nil && labels.SelectorFromValidatedSet(s.Spec.Selector).Matches(labels.Set(pod.Labels)) {
				kit.Enqueue(b.queue, s)
			}
		}
	}
}

// selected lists the pods svc's selector matches.
func (b *base) selected(svc *corev1.Service) ([]*corev1.Pod, error) {
	return b.pods.Pods(svc.Namespace).List(labels.SelectorFromValidatedSet(svc.Spec.Selector))
}

func (b *base) run(ctx context.Context, sync kit.SyncFunc, extra ...cache.InformerSynced) error {
	if !kit.WaitForSync(ctx, append(b.synced, extra...)...) {
		return ctx.Err()
	}
	kit.RunWorkers(ctx, b.queue, 2, sync, b.log)
	return nil
}
