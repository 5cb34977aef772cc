package daemonset

import (
	"context"
	"errors"
	"fmt"

	"go.uber.org/zap"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/tools/cache"

	"github.com/orch/orch/server/controllers/history"
	"github.com/orch/orch/server/controllers/replicaset"
)

// Event reasons and messages, as upstream records them.
const (
	reasonCreate       = "SuccessfulCreate"
	reasonDelete       = "SuccessfulDelete"
	reasonFailedCreate = "FailedCreate"
	reasonFailedDelete = "FailedDelete"
	reasonFailedPod    = "FailedDaemonPod"
	reasonSucceededPod = "SucceededDaemonPod"
)

// state is what one sync works on, read once from the cache.
type state struct {
	ds     *appsv1.DaemonSet
	key    string
	nodes  []*corev1.Node
	pods   []*corev1.Pod            // owned, including terminating ones
	byNode map[string][]*corev1.Pod // by target node
	spec   *corev1.PodSpec          // template spec with default tolerations
	hash   string
	gen    string
}

func (c *Controller) sync(ctx context.Context, key string) error {
	ns, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return nil
	}
	ds, err := c.dsLister.DaemonSets(ns).Get(name)
	if apierrors.IsNotFound(err) {
		c.exp.forget(key)
		return nil
	}
	if err != nil {
		return err
	}
	st, err := c.load(ds, key)
	if err != nil {
		return err
	}
	if ds.DeletionTimestamp != nil {
		return nil
	}
	cur, old, err := c.revs.Sync(ctx, parentOf(ds))
	if errors.Is(err, history.ErrCollision) {
		return c.bumpCollision(ctx, ds, err)
	}
	if err != nil {
		return err
	}
	st.hash = cur.Labels[history.HashLabel]
	if c.exp.satisfied(key, st.pods, c.now()) {
		if err := c.reconcile(ctx, st, old); err != nil {
			return err
		}
	}
	return c.updateStatus(ctx, st)
}

func (c *Controller) reconcile(ctx context.Context, st *state, old []*appsv1.ControllerRevision) error {
	if err := c.manage(ctx, st); err != nil {
		return err
	}
	if st.ds.Spec.UpdateStrategy.Type == appsv1.RollingUpdateDaemonSetStrategyType {
		if err := c.rollingUpdate(ctx, st); err != nil {
			return err
		}
	}
	inUse := map[string]bool{}
	for _, p := range st.pods {
		inUse[p.Labels[history.HashLabel]] = true
	}
	limit := 10
	if l := st.ds.Spec.RevisionHistoryLimit; l != nil {
		limit = int(*l)
	}
	return c.revs.Truncate(ctx, old, limit, inUse)
}

func parentOf(ds *appsv1.DaemonSet) history.Parent {
	sel, err := metav1.LabelSelectorAsSelector(ds.Spec.Selector)
	if err != nil {
		sel = labels.Nothing()
	}
	return history.Parent{Object: ds, Kind: Kind, Selector: sel, Template: &ds.Spec.Template,
		CollisionCount: ds.Status.CollisionCount, Annotations: ds.Annotations}
}

func (c *Controller) load(ds *appsv1.DaemonSet, key string) (*state, error) {
	nodes, err := c.nodeLister.List(labels.Everything())
	if err != nil {
		return nil, fmt.Errorf("listing nodes: %w", err)
	}
	pods, err := replicaset.PodsOwnedBy(c.podIndexer, ds.Namespace, ds.UID, false)
	if err != nil {
		return nil, fmt.Errorf("listing pods of daemonset %s: %w", key, err)
	}
	st := &state{ds: ds, key: key, nodes: nodes, pods: pods, byNode: map[string][]*corev1.Pod{},
		spec: podSpec(ds), gen: ds.Annotations[generationKey]}
	for _, p := range pods {
		terminal := p.Status.Phase == corev1.PodFailed || p.Status.Phase == corev1.PodSucceeded
		if terminal && p.DeletionTimestamp != nil {
			continue
		}
		n := targetNode(p)
		st.byNode[n] = append(st.byNode[n], p)
	}
	for _, ps := range st.byNode {
		byAge(ps)
	}
	return st, nil
}

// bumpCollision raises status.collisionCount after a revision name clash.
func (c *Controller) bumpCollision(ctx context.Context, ds *appsv1.DaemonSet, cause error) error {
	fresh, err := c.client.AppsV1().DaemonSets(ds.Namespace).Get(ctx, ds.Name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	n := int32(0)
	if fresh.Status.CollisionCount != nil {
		n = *fresh.Status.CollisionCount
	}
	n++
	fresh.Status.CollisionCount = &n
	if _, err := c.client.AppsV1().DaemonSets(ds.Namespace).UpdateStatus(ctx, fresh, metav1.UpdateOptions{}); err != nil {
		return err
	}
	c.log.Info("revision hash collision, bumped collisionCount", zap.String("daemonset", ds.Name), zap.Int32("collisionCount", n))
	return cause
}
