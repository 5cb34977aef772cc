package deployment

import (
	"fmt"
	"math"
	"sort"
	"strconv"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// newRSNewReplicas is how big the new ReplicaSet may be now: for
// RollingUpdate as big as maxSurge allows, capped at spec.replicas; for
// Recreate spec.replicas.
func newRSNewReplicas(d *appsv1.Deployment, all []*appsv1.ReplicaSet, newRS *appsv1.ReplicaSet) (int32, error) {
	switch d.Spec.Strategy.Type {
	case appsv1.RollingUpdateDeploymentStrategyType:
		surge, err := intstr.GetScaledValueFromIntOrPercent(d.Spec.Strategy.RollingUpdate.MaxSurge, int(*d.Spec.Replicas), true)
		if err != nil {
			return 0, err
		}
		// Unlike upstream, an old ReplicaSet counts with the pods it still
		// has (status.replicas) until its controller has deleted the ones
		// it was scaled down by, so the pods that exist never exceed
		// replicas+maxSurge, not even for the moment the two controllers
		// race.
		current := sum(all, func(rs *appsv1.ReplicaSet) int32 { return max(rs.Status.Replicas, *rs.Spec.Replicas) })
		maxTotal := *d.Spec.Replicas + int32(surge)
		if current >= maxTotal {
			return *newRS.Spec.Replicas, nil
		}
		up := min(maxTotal-current, *d.Spec.Replicas-*newRS.Spec.Replicas)
		return *newRS.Spec.Replicas + up, nil
	case appsv1.RecreateDeploymentStrategyType:
		return *d.Spec.Replicas, nil
	}
	return 0, fmt.Errorf("deployment type %v isn't supported", d.Spec.Strategy.Type)
}

// isSaturated: the new ReplicaSet has all replicas, all available.
func isSaturated(d *appsv1.Deployment, rs *appsv1.ReplicaSet) bool {
	if rs == nil {
		return false
	}
	desired, err := strconv.Atoi(rs.Annotations[DesiredReplicasAnnotation])
	if err != nil {
		return false
	}
	return *rs.Spec.Replicas == *d.Spec.Replicas && int32(desired) == *d.Spec.Replicas &&
		rs.Status.AvailableReplicas == *d.Spec.Replicas
}

// findActiveOrLatest is the only ReplicaSet with replicas, or the newest
// if none has any; nil when several have.
func findActiveOrLatest(newRS *appsv1.ReplicaSet, old []*appsv1.ReplicaSet) *appsv1.ReplicaSet {
	if newRS == nil && len(old) == 0 {
		return nil
	}
	sort.Sort(sort.Reverse(byCreation(old)))
	all := filterActive(append(append([]*appsv1.ReplicaSet(nil), old...), newRS))
	switch len(all) {
	case 0:
		if newRS != nil {
			return newRS
		}
		return old[0]
	case 1:
		return all[0]
	}
	return nil
}

// proportion is rs's share of toAdd (proportional scaling during a rollout).
func proportion(rs *appsv1.ReplicaSet, d *appsv1.Deployment, toAdd, added int32) int32 {
	if rs == nil || *rs.Spec.Replicas == 0 || toAdd == 0 || toAdd == added {
		return 0
	}
	frac := fraction(rs, d)
	allowed := toAdd - added
	if toAdd > 0 {
		return min(frac, allowed)
	}
	return max(frac, allowed)
}

func fraction(rs *appsv1.ReplicaSet, d *appsv1.Deployment) int32 {
	if *d.Spec.Replicas == 0 {
		return -*rs.Spec.Replicas
	}
	maxNow := *d.Spec.Replicas + maxSurge(d)
	before, ok := int32Annotation(rs, MaxReplicasAnnotation)
	if !ok || before == 0 {
		if before = d.Status.Replicas; before == 0 {
			return 0
		}
	}
	size := float64(*rs.Spec.Replicas*maxNow) / float64(before)
	return int32(math.Round(size)) - *rs.Spec.Replicas
}
