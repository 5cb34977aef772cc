package serviceaccount

import (
	"context"
	"fmt"

	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/orch/orch/server/controllers/kit"
)

// DefaultName is the ServiceAccount every namespace gets.
const DefaultName = "default"

// ServiceAccounts keeps the default ServiceAccount of every namespace.
type ServiceAccounts struct {
	kc     *kit.Context
	log    *zap.Logger
	q      kit.Queue
	ns     corelisters.NamespaceLister
	sas    corelisters.ServiceAccountLister
	synced []cache.InformerSynced
}

// New registers the controller's informers on kc.
func New(kc *kit.Context) (*ServiceAccounts, error) {
	nsInf := kc.Informers.Core().V1().Namespaces()
	saInf := kc.Informers.Core().V1().ServiceAccounts()
	c := &ServiceAccounts{kc: kc, log: kc.Logger.Named("serviceaccount"), q: kc.NewQueue("serviceaccount"),
		ns: nsInf.Lister(), sas: saInf.Lister()}
	if _, err := nsInf.Informer().AddEventHandler(kit.EnqueueHandler(c.q)); err != nil {
		return nil, fmt.Errorf("namespace handler: %w", err)
	}
	if _, err := saInf.Informer().AddEventHandler(namespaceOf(c.q, DefaultName)); err != nil {
		return nil, fmt.Errorf("serviceaccount handler: %w", err)
	}
	c.synced = []cache.InformerSynced{nsInf.Informer().HasSynced, saInf.Informer().HasSynced}
	return c, nil
}

// Run works the queue until ctx ends.
func (c *ServiceAccounts) Run(ctx context.Context) error {
	return runQueue(ctx, c.q, c.synced, c.sync, c.log)
}

// sync makes sure namespace key has its default ServiceAccount.
func (c *ServiceAccounts) sync(ctx context.Context, key string) error {
	if !active(c.ns, key) {
		return nil
	}
	if _, err := c.sas.ServiceAccounts(key).Get(DefaultName); err == nil {
		return nil
	} else if !apierrors.IsNotFound(err) {
		return err
	}
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: DefaultName, Namespace: key}}
	_, err := c.kc.Client.CoreV1().ServiceAccounts(key).Create(ctx, sa, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) || apierrors.IsForbidden(err) && terminating(err) {
		return nil
	}
	return err
}

// active reports whether the namespace exists and is not terminating.
func active(ns corelisters.NamespaceLister, name string) bool {
	n, err := ns.Get(name)
	return err == nil && n.Status.Phase != corev1.NamespaceTerminating && n.DeletionTimestamp == nil
}

// terminating recognises the "namespace is being terminated" refusal.
func terminating(err error) bool {
	st, ok := err.(apierrors.APIStatus)
	return ok && st.Status().Details != nil && len(st.Status().Details.Causes) > 0 &&
		st.Status().Details.Causes[0].Type == corev1.NamespaceTerminatingCause
}

// namespaceOf enqueues the namespace of objects named name (their deletion
// and changes make the namespace's sync run again).
func namespaceOf(q kit.Queue, name string) cache.ResourceEventHandler {
	enqueue := func(obj any) {
		if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = t.Obj
		}
		m, err := metaOf(obj)
		if err == nil && m.GetName() == name {
			q.Add(m.GetNamespace())
		}
	}
	return cache.ResourceEventHandlerFuncs{AddFunc: enqueue, DeleteFunc: enqueue,
		UpdateFunc: func(_, n any) { enqueue(n) }}
}

func metaOf(obj any) (metav1.Object, error) {
	m, ok := obj.(metav1.Object)
	if !ok {
		return nil, fmt.Errorf("%T has no metadata", obj)
	}
	return m, nil
}

// runQueue waits for the cache, then works q with one worker until ctx ends.
func runQueue(ctx context.Context, q kit.Queue, synced []cache.InformerSynced, sync kit.SyncFunc, log *zap.Logger) error {
	defer q.ShutDown()
	if !kit.WaitForSync(ctx, synced...) {
		return ctx.Err()
	}
	kit.RunWorkers(ctx, q, 1, sync, log)
	return nil
}
