package deployment

import (
	"context"
	"sort"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// scale brings the ReplicaSets to spec.replicas: the only active one
// directly, or, mid-rollout, proportionally to their sizes.
func (c *Controller) scale(ctx context.Context, d *appsv1.Deployment, newRS *appsv1.ReplicaSet, old []*appsv1.ReplicaSet) error {
	if one := findActiveOrLatest(newRS, old); one != nil {
		if *one.Spec.Replicas == *d.Spec.Replicas {
			return nil
		}
		_, _, err := c.scaleReplicaSet(ctx, one, *d.Spec.Replicas, d, false)
		return err
	}
	if isSaturated(d, newRS) {
		for _, o := range filterActive(old) {
			if _, _, err := c.scaleReplicaSet(ctx, o, 0, d, false); err != nil {
				return err
			}
		}
		return nil
	}
	if !isRollingUpdate(d) {
		return nil
	}
	all := filterActive(append(append([]*appsv1.ReplicaSet(nil), old...), newRS))
	allowed := int32(0)
	if *d.Spec.Replicas > 0 {
		allowed = *d.Spec.Replicas + maxSurge(d)
	}
	toAdd := allowed - sum(all, specReplicas)
	switch {
	case toAdd > 0:
		sort.Sort(bySizeNewer(all))
	case toAdd < 0:
		sort.Sort(bySizeOlder(all))
	}
	added := int32(0)
	sizes := make([]int32, len(all))
	for i, rs := range all {
		p := proportion(rs, d, toAdd, added)
		sizes[i] = *rs.Spec.Replicas + p
		added += p
	}
	for i, rs := range all {
		if i == 0 && toAdd != 0 {
			sizes[0] = max(sizes[0]+toAdd-added, 0)
		}
		if _, _, err := c.scaleReplicaSet(ctx, rs, sizes[i], d, true); err != nil {
			return err
		}
	}
	return nil
}

// scaleReplicaSet sets rs's replicas and its desired/max annotations and
// records ScalingReplicaSet when the size changed.
func (c *Controller) scaleReplicaSet(ctx context.Context, rs *appsv1.ReplicaSet, size int32, d *appsv1.Deployment, force bool) (bool, *appsv1.ReplicaSet, error) {
	if !force && *rs.Spec.Replicas == size {
		return false, rs, nil
	}
	sizeChanged := *rs.Spec.Replicas != size
	maxReplicas := *d.Spec.Replicas + maxSurge(d)
	if !sizeChanged && !replicasAnnotationsNeedUpdate(rs, *d.Spec.Replicas, maxReplicas) {
		return false, rs, nil
	}
	from := *rs.Spec.Replicas
	cp := rs.DeepCopy()
	*cp.Spec.Replicas = size
	setReplicasAnnotations(cp, *d.Spec.Replicas, maxReplicas)
	out, err := c.client.AppsV1().ReplicaSets(cp.Namespace).Update(ctx, cp, metav1.UpdateOptions{})
	if err != nil {
		return false, rs, err
	}
	if sizeChanged {
		dir := "down"
		if from < size {
			dir = "up"
		}
		c.recorder.Eventf(d, corev1.EventTypeNormal, "ScalingReplicaSet", "Scaled %s replica set %s from %d to %d", dir, out.Name, from, size)
	}
	return sizeChanged, out, nil
}

// cleanupDeployment deletes the oldest old ReplicaSets beyond
// revisionHistoryLimit that are scaled to zero and settled.
func (c *Controller) cleanupDeployment(ctx context.Context, old []*appsv1.ReplicaSet, d *appsv1.Deployment) error {
	if d.Spec.RevisionHistoryLimit == nil || *d.Spec.RevisionHistoryLimit == 1<<31-1 {
		return nil
	}
	var alive []*appsv1.ReplicaSet
	for _, rs := range old {
		if rs != nil && rs.DeletionTimestamp == nil {
			alive = append(alive, rs)
		}
	}
	diff := int32(len(alive)) - *d.Spec.RevisionHistoryLimit
	if diff <= 0 {
		return nil
	}
	sort.Sort(byRevision(alive))
	for _, rs := range alive[:diff] {
		if rs.Status.Replicas != 0 || *rs.Spec.Replicas != 0 || rs.Generation > rs.Status.ObservedGeneration {
			continue
		}
		err := c.client.AppsV1().ReplicaSets(rs.Namespace).Delete(ctx, rs.Name, metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			return err
		}
	}
	return nil
}
