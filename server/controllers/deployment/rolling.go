package deployment

import (
	"context"
	"sort"

	appsv1 "k8s.io/api/apps/v1"
)

// rolloutRolling scales the new ReplicaSet up within maxSurge, or else the
// old ones down within maxUnavailable, then syncs the rollout status.
func (c *Controller) rolloutRolling(ctx context.Context, d *appsv1.Deployment, rsList []*appsv1.ReplicaSet) error {
	newRS, old, err := c.getAllRSsAndSyncRevision(ctx, d, rsList, true)
	if err != nil {
		return err
	}
	all := append(append([]*appsv1.ReplicaSet(nil), old...), newRS)
	if up, err := c.reconcileNewRS(ctx, all, newRS, d); err != nil {
		return err
	} else if up {
		return c.syncRolloutStatus(ctx, all, newRS, d)
	}
	if down, err := c.reconcileOldRSs(ctx, all, filterActive(old), newRS, d); err != nil {
		return err
	} else if down {
		return c.syncRolloutStatus(ctx, all, newRS, d)
	}
	if deploymentComplete(d, &d.Status) {
		if err := c.cleanupDeployment(ctx, old, d); err != nil {
			return err
		}
	}
	return c.syncRolloutStatus(ctx, all, newRS, d)
}

func (c *Controller) reconcileNewRS(ctx context.Context, all []*appsv1.ReplicaSet, newRS *appsv1.ReplicaSet, d *appsv1.Deployment) (bool, error) {
	if *newRS.Spec.Replicas == *d.Spec.Replicas {
		return false, nil
	}
	if *newRS.Spec.Replicas > *d.Spec.Replicas {
		scaled, _, err := c.scaleReplicaSet(ctx, newRS, *d.Spec.Replicas, d, false)
		return scaled, err
	}
	n, err := newRSNewReplicas(d, all, newRS)
	if err != nil {
		return false, err
	}
	scaled, _, err := c.scaleReplicaSet(ctx, newRS, n, d, false)
	return scaled, err
}

// reconcileOldRSs scales old ReplicaSets down: first their unhealthy
// replicas, then as many as minAvailable leaves room for.
func (c *Controller) reconcileOldRSs(ctx context.Context, all, old []*appsv1.ReplicaSet, newRS *appsv1.ReplicaSet, d *appsv1.Deployment) (bool, error) {
	if sum(old, specReplicas) == 0 {
		return false, nil
	}
	minAvailable := *d.Spec.Replicas - maxUnavailable(d)
	newUnavailable := *newRS.Spec.Replicas - newRS.Status.AvailableReplicas
	maxScaledDown := sum(all, specReplicas) - minAvailable - newUnavailable
	if maxScaledDown <= 0 {
		return false, nil
	}
	old, cleaned, err := c.cleanupUnhealthyReplicas(ctx, old, d, maxScaledDown)
	if err != nil {
		return false, nil
	}
	all = append(append([]*appsv1.ReplicaSet(nil), old...), newRS)
	scaledDown, err := c.scaleDownOldRSsForRollingUpdate(ctx, all, old, d)
	if err != nil {
		return false, nil
	}
	return cleaned+scaledDown > 0, nil
}

func (c *Controller) cleanupUnhealthyReplicas(ctx context.Context, old []*appsv1.ReplicaSet, d *appsv1.Deployment, maxCleanup int32) ([]*appsv1.ReplicaSet, int32, error) {
	sort.Sort(byCreation(old))
	total := int32(0)
	for i, rs := range old {
		if total >= maxCleanup {
			break
		}
		if *rs.Spec.Replicas == 0 || *rs.Spec.Replicas == rs.Status.AvailableReplicas {
			continue
		}
		n := min(maxCleanup-total, *rs.Spec.Replicas-rs.Status.AvailableReplicas)
		_, updated, err := c.scaleReplicaSet(ctx, rs, *rs.Spec.Replicas-n, d, false)
		if err != nil {
			return nil, total, err
		}
		total += n
		old[i] = updated
	}
	return old, total, nil
}

func (c *Controller) scaleDownOldRSsForRollingUpdate(ctx context.Context, all, old []*appsv1.ReplicaSet, d *appsv1.Deployment) (int32, error) {
	minAvailable := *d.Spec.Replicas - maxUnavailable(d)
	available := sum(all, availableReplicas)
	if available <= minAvailable {
		return 0, nil
	}
	sort.Sort(byCreation(old))
	total, want := int32(0), available-minAvailable
	for _, rs := range old {
		if total >= want {
			break
		}
		if *rs.Spec.Replicas == 0 {
			continue
		}
		n := min(*rs.Spec.Replicas, want-total)
		if _, _, err := c.scaleReplicaSet(ctx, rs, *rs.Spec.Replicas-n, d, false); err != nil {
			return total, err
		}
		total += n
	}
	return total, nil
}
