package disruption

import (
	"context"
	"fmt"

	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/kubernetes"
	appslisters "k8s.io/client-go/listers/apps/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	policylisters "k8s.io/client-go/listers/policy/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/clock"

	"github.com/orch/orch/server/controllers/kit"
)

const name = "disruption"

// Controller keeps PodDisruptionBudget status.
type Controller struct {
	client kubernetes.Interface
	pdbs   policylisters.PodDisruptionBudgetLister
	pods   corelisters.PodLister
	rss    appslisters.ReplicaSetLister
	stss   appslisters.StatefulSetLister
	synced []cache.InformerSynced
	queue  kit.Queue
	clock  clock.Clock
	log    *zap.Logger
}

// New registers the informers and handlers on kc.
func New(kc *kit.Context) (*Controller, error) {
	f := kc.Informers
	pdbs, pods := f.Policy().V1().PodDisruptionBudgets(), f.Core().V1().Pods()
	rss, stss := f.Apps().V1().ReplicaSets(), f.Apps().V1().StatefulSets()
	c := &Controller{client: kc.Client, pdbs: pdbs.Lister(), pods: pods.Lister(), rss: rss.Lister(), stss: stss.Lister(),
		synced: []cache.InformerSynced{pdbs.Informer().HasSynced, pods.Informer().HasSynced, rss.Informer().HasSynced, stss.Informer().HasSynced},
		queue:  kc.NewQueue(name), clock: clock.RealClock{}, log: kc.Logger.Named(name)}
	if _, err := pdbs.Informer().AddEventHandler(kit.EnqueueHandler(c.queue)); err != nil {
		return nil, err
	}
	podEvents := func(obj any) { c.enqueueFor(obj) }
	if _, err := pods.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: podEvents, UpdateFunc: func(_, obj any) { podEvents(obj) }, DeleteFunc: podEvents,
	}); err != nil {
		return nil, err
	}
	for _, inf := range []cache.SharedIndexInformer{rss.Informer(), stss.Informer()} {
		if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
			UpdateFunc: func(_, obj any) { c.enqueueNamespace(obj) },
		}); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// Run runs the workers until ctx ends.
func (c *Controller) Run(ctx context.Context) error {
	if !kit.WaitForSync(ctx, c.synced...) {
		return ctx.Err()
	}
	kit.RunWorkers(ctx, c.queue, 1, c.sync, c.log)
	return nil
}

// enqueueFor enqueues the budgets whose selector matches a pod.
func (c *Controller) enqueueFor(obj any) {
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = t.Obj
	}
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return
	}
	pdbs, _ := c.pdbs.PodDisruptionBudgets(pod.Namespace).List(labels.Everything())
	for _, pdb := range pdbs {
		sel, err := metav1.LabelSelectorAsSelector(pdb.Spec.Selector)
		if err == nil && !sel.Empty() && sel.Matches(labels.Set(pod.Labels)) {
			kit.Enqueue(c.queue, pdb)
		}
	}
}

// enqueueNamespace enqueues every budget of a controller's namespace
// (its replicas count changed).
func (c *Controller) enqueueNamespace(obj any) {
	m, ok := obj.(metav1.Object)
	if !ok {
		return
	}
	pdbs, _ := c.pdbs.PodDisruptionBudgets(m.GetNamespace()).List(labels.Everything())
	for _, pdb := range pdbs {
		kit.Enqueue(c.queue, pdb)
	}
}

func (c *Controller) sync(ctx context.Context, key string) error {
	ns, pdbName, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return nil
	}
	pdb, err := c.pdbs.PodDisruptionBudgets(ns).Get(pdbName)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	pods, err := c.matchingPods(pdb)
	if err != nil {
		return err
	}
	b := compute(pdb, pods, c.expectedReplicas(pods), c.clock.Now())
	if b.nextCheck > 0 {
		c.queue.AddAfter(key, b.nextCheck)
	}
	upd := pdb.DeepCopy()
	apply(upd, b)
	if apiequality.Semantic.DeepEqual(upd.Status, pdb.Status) {
		return nil
	}
	if _, err := c.client.PolicyV1().PodDisruptionBudgets(ns).UpdateStatus(ctx, upd, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("updating status of PodDisruptionBudget %s: %w", key, err)
	}
	return nil
}

func (c *Controller) matchingPods(pdb *policyv1.PodDisruptionBudget) ([]*corev1.Pod, error) {
	sel, err := metav1.LabelSelectorAsSelector(pdb.Spec.Selector)
	if err != nil || sel.Empty() {
		return nil, nil
	}
	return c.pods.Pods(pdb.Namespace).List(sel)
}

// expectedReplicas sums the replicas of the pods' controllers; -1 when a
// pod has no known controller (then the pods are counted).
func (c *Controller) expectedReplicas(pods []*corev1.Pod) int32 {
	seen := map[string]bool{}
	var total int32
	for _, p := range pods {
		ref := metav1.GetControllerOf(p)
		if ref == nil {
			return -1
		}
		if seen[string(ref.UID)] {
			continue
		}
		seen[string(ref.UID)] = true
		n, ok := c.replicasOf(p.Namespace, ref)
		if !ok {
			return -1
		}
		total += n
	}
	return total
}

func (c *Controller) replicasOf(ns string, ref *metav1.OwnerReference) (int32, bool) {
	switch ref.Kind {
	case "ReplicaSet":
		rs, err := c.rss.ReplicaSets(ns).Get(ref.Name)
		if err != nil || rs.UID != ref.UID {
			return 0, false
		}
		return replicas(rs.Spec.Replicas), true
	case "StatefulSet":
		sts, err := c.stss.StatefulSets(ns).Get(ref.Name)
		if err != nil || sts.UID != ref.UID {
			return 0, false
		}
		return replicas(sts.Spec.Replicas), true
	}
	return 0, false
}

func replicas(p *int32) int32 {
	if p == nil {
		return 1
	}
	return *p
}
