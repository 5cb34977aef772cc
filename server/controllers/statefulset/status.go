package statefulset

import (
	"context"

	"go.uber.org/zap"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// computeStatus counts as upstream's updateStatefulSet/completeRollingUpdate.
func (c *Controller) computeStatus(r *run) appsv1.StatefulSetStatus {
	s := r.set.Status.DeepCopy()
	s.ObservedGeneration = r.set.Generation
	s.Replicas, s.ReadyReplicas, s.AvailableReplicas, s.CurrentReplicas, s.UpdatedReplicas = 0, 0, 0, 0, 0
	s.CurrentRevision, s.UpdateRevision = r.current.Name, r.update.Name
	for _, pods := range [][]*corev1.Pod{r.replicas, r.condemned} {
		for _, p := range pods {
			if p == nil {
				continue
			}
			s.Replicas++
			if runningAndReady(p) {
				s.ReadyReplicas++
				if c.available(r.set, p) {
					s.AvailableReplicas++
				}
			}
			if p.DeletionTimestamp != nil {
				continue
			}
			if revisionOf(p) == s.CurrentRevision {
				s.CurrentReplicas++
			}
			if revisionOf(p) == s.UpdateRevision {
				s.UpdatedReplicas++
			}
		}
	}
	if r.set.Spec.UpdateStrategy.Type == appsv1.RollingUpdateStatefulSetStrategyType &&
		s.UpdatedReplicas == s.Replicas && s.ReadyReplicas == s.Replicas && s.Replicas == replicasOf(r.set) {
		s.CurrentReplicas, s.CurrentRevision = s.UpdatedReplicas, s.UpdateRevision
	}
	return *s
}

func (c *Controller) updateStatus(ctx context.Context, r *run) error {
	s := c.computeStatus(r)
	if apiequality.Semantic.DeepEqual(s, r.set.Status) {
		return nil
	}
	set := r.set.DeepCopy()
	set.Status = s
	_, err := c.client.AppsV1().StatefulSets(set.Namespace).UpdateStatus(ctx, set, metav1.UpdateOptions{})
	return err
}

// truncateHistory keeps revisionHistoryLimit old revisions besides the
// current and update ones and those pods still use.
func (c *Controller) truncateHistory(ctx context.Context, r *run) error {
	owned, err := c.revs.Owned(parentOf(r.set))
	if err != nil {
		return err
	}
	inUse := map[string]bool{r.current.Name: true, r.update.Name: true}
	for _, pods := range [][]*corev1.Pod{r.replicas, r.condemned} {
		for _, p := range pods {
			if p != nil {
				inUse[revisionOf(p)] = true
			}
		}
	}
	var old []*appsv1.ControllerRevision
	for _, cr := range owned {
		if cr.Name != r.update.Name {
			old = append(old, cr)
		}
	}
	limit := 10
	if l := r.set.Spec.RevisionHistoryLimit; l != nil {
		limit = int(*l)
	}
	return c.revs.Truncate(ctx, old, limit, inUse)
}

// bumpCollision raises status.collisionCount after a revision name clash.
func (c *Controller) bumpCollision(ctx context.Context, set *appsv1.StatefulSet, cause error) error {
	fresh, err := c.client.AppsV1().StatefulSets(set.Namespace).Get(ctx, set.Name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	n := int32(1)
	if fresh.Status.CollisionCount != nil {
		n = *fresh.Status.CollisionCount + 1
	}
	fresh.Status.CollisionCount = &n
	if _, err := c.client.AppsV1().StatefulSets(set.Namespace).UpdateStatus(ctx, fresh, metav1.UpdateOptions{}); err != nil {
		return err
	}
	c.log.Info("revision hash collision, bumped collisionCount", zap.String("statefulset", set.Name), zap.Int32("collisionCount", n))
	return cause
}
