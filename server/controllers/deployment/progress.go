package deployment

import (
	"context"
	"fmt"
	"reflect"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
)

// syncRolloutStatus writes the status with the Progressing condition
// (NewReplicaSetAvailable, ReplicaSetUpdated, ProgressDeadlineExceeded) and
// ReplicaFailure taken from the ReplicaSets, and requeues a Deployment
// that could still miss its deadline.
func (c *Controller) syncRolloutStatus(ctx context.Context, all []*appsv1.ReplicaSet, newRS *appsv1.ReplicaSet, d *appsv1.Deployment) error {
	st := c.calculateStatus(all, newRS, d)
	if !hasProgressDeadline(d) {
		removeCondition(&st, appsv1.DeploymentProgressing)
	}
	cur := getCondition(d.Status, appsv1.DeploymentProgressing)
	complete := st.Replicas == st.UpdatedReplicas && cur != nil && cur.Reason == NewRSAvailableReason
	if hasProgressDeadline(d) && !complete {
		c.setProgressing(d, &st, newRS, cur)
	}
	if f := replicaFailures(all, newRS); len(f) > 0 {
		setCondition(&st, f[0])
	} else {
		removeCondition(&st, appsv1.DeploymentReplicaFailure)
	}
	if reflect.DeepEqual(d.Status, st) {
		c.requeueStuck(d, st)
		return nil
	}
	d.Status = st
	return c.updateStatus(ctx, d)
}

func (c *Controller) setProgressing(d *appsv1.Deployment, st *appsv1.DeploymentStatus, newRS *appsv1.ReplicaSet, cur *appsv1.DeploymentCondition) {
	subject := func(what string) string {
		if newRS != nil {
			return fmt.Sprintf("ReplicaSet %q %s.", newRS.Name, what)
		}
		return fmt.Sprintf("Deployment %q %s.", d.Name, what)
	}
	now := c.now()
	switch {
	case deploymentComplete(d, st):
		setCondition(st, newCondition(appsv1.DeploymentProgressing, corev1.ConditionTrue, NewRSAvailableReason, subject("has successfully progressed"), now))
	case deploymentProgressing(d, st):
		cond := newCondition(appsv1.DeploymentProgressing, corev1.ConditionTrue, ReplicaSetUpdatedReason, subject("is progressing"), now)
		if cur != nil {
			if cur.Status == corev1.ConditionTrue {
				cond.LastTransitionTime = cur.LastTransitionTime
			}
			removeCondition(st, appsv1.DeploymentProgressing)
		}
		setCondition(st, cond)
	case deploymentTimedOut(d, st, now):
		setCondition(st, newCondition(appsv1.DeploymentProgressing, corev1.ConditionFalse, TimedOutReason, subject("has timed out progressing"), now))
	}
}

// replicaFailures are the new ReplicaSet's ReplicaFailure conditions, or
// else any ReplicaSet's.
func replicaFailures(all []*appsv1.ReplicaSet, newRS *appsv1.ReplicaSet) []appsv1.DeploymentCondition {
	collect := func(rss []*appsv1.ReplicaSet) []appsv1.DeploymentCondition {
		var out []appsv1.DeploymentCondition
		for _, rs := range rss {
			if rs == nil {
				continue
			}
			for _, c := range rs.Status.Conditions {
				if c.Type == appsv1.ReplicaSetReplicaFailure {
					out = append(out, rsToDeploymentCondition(c))
				}
			}
		}
		return out
	}
	if f := collect([]*appsv1.ReplicaSet{newRS}); len(f) > 0 {
		return f
	}
	return collect(all)
}

// requeueStuck checks the Deployment again when its progress deadline
// would pass (a timer, not polling).
func (c *Controller) requeueStuck(d *appsv1.Deployment, st appsv1.DeploymentStatus) {
	cur := getCondition(d.Status, appsv1.DeploymentProgressing)
	if !hasProgressDeadline(d) || cur == nil || deploymentComplete(d, &st) || cur.Reason == TimedOutReason {
		return
	}
	after := cur.LastUpdateTime.Add(time.Duration(*d.Spec.ProgressDeadlineSeconds) * time.Second).Sub(c.now())
	k := d.Namespace + "/" + d.Name
	if after < time.Second {
		c.queue.AddRateLimited(k)
		return
	}
	c.queue.AddAfter(k, after+time.Second)
}
