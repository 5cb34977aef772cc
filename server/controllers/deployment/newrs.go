package deployment

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/orch/orch/server/controllers/replicaset"
)

// getNewReplicaSet returns the ReplicaSet of the current template, bringing
// its annotations and minReadySeconds up to date, or creates it (create).
func (c *Controller) getNewReplicaSet(ctx context.Context, d *appsv1.Deployment, rsList, old []*appsv1.ReplicaSet, create bool) (*appsv1.ReplicaSet, error) {
	existing := findNewRS(d, rsList)
	newRevision := maxRevision(old) + 1
	if existing != nil {
		return c.syncExistingNewRS(ctx, d, existing, newRevision)
	}
	if !create {
		return nil, nil
	}
	rs, err := c.newReplicaSet(d, old, newRevision)
	if err != nil {
		return nil, err
	}
	created, err := c.client.AppsV1().ReplicaSets(d.Namespace).Create(ctx, rs, metav1.CreateOptions{})
	alreadyExists := false
	switch {
	case apierrors.IsAlreadyExists(err):
		if created, err = c.existingOrCollision(ctx, d, rs); err != nil {
			return nil, err
		}
		alreadyExists = true
	case apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause):
		return nil, err
	case err != nil:
		msg := fmt.Sprintf("Failed to create new replica set %q: %v", rs.Name, err)
		if hasProgressDeadline(d) {
			setCondition(&d.Status, newCondition(appsv1.DeploymentProgressing, corev1.ConditionFalse, FailedRSCreateReason, msg, c.now()))
			_ = c.updateStatus(ctx, d)
		}
		c.recorder.Eventf(d, corev1.EventTypeWarning, FailedRSCreateReason, "%s", msg)
		return nil, err
	}
	if !alreadyExists && *rs.Spec.Replicas > 0 {
		c.recorder.Eventf(d, corev1.EventTypeNormal, "ScalingReplicaSet", "Scaled up replica set %s from 0 to %d", created.Name, *rs.Spec.Replicas)
	}
	needsUpdate := setDeploymentRevision(d, fmt.Sprint(newRevision))
	if !alreadyExists && hasProgressDeadline(d) {
		setCondition(&d.Status, newCondition(appsv1.DeploymentProgressing, corev1.ConditionTrue, NewReplicaSetReason,
			fmt.Sprintf("Created new replica set %q", created.Name), c.now()))
		needsUpdate = true
	}
	if needsUpdate {
		err = c.updateStatus(ctx, d)
	}
	return created, err
}

// syncExistingNewRS copies annotations/minReadySeconds to the new RS, or
// records its revision and FoundNewReplicaSet on the Deployment.
func (c *Controller) syncExistingNewRS(ctx context.Context, d *appsv1.Deployment, existing *appsv1.ReplicaSet, newRevision int64) (*appsv1.ReplicaSet, error) {
	rs := existing.DeepCopy()
	annotationsChanged := setNewRSAnnotations(d, rs, newRevision, true)
	if annotationsChanged || rs.Spec.MinReadySeconds != d.Spec.MinReadySeconds {
		rs.Spec.MinReadySeconds = d.Spec.MinReadySeconds
		return c.client.AppsV1().ReplicaSets(rs.Namespace).Update(ctx, rs, metav1.UpdateOptions{})
	}
	needsUpdate := setDeploymentRevision(d, rs.Annotations[RevisionAnnotation])
	if hasProgressDeadline(d) && getCondition(d.Status, appsv1.DeploymentProgressing) == nil {
		setCondition(&d.Status, newCondition(appsv1.DeploymentProgressing, corev1.ConditionTrue, FoundNewRSReason,
			fmt.Sprintf("Found new replica set %q", rs.Name), c.now()))
		needsUpdate = true
	}
	if needsUpdate {
		if err := c.updateStatus(ctx, d); err != nil {
			return nil, err
		}
	}
	return rs, nil
}

// newReplicaSet builds (does not create) the ReplicaSet of d's template.
func (c *Controller) newReplicaSet(d *appsv1.Deployment, old []*appsv1.ReplicaSet, newRevision int64) (*appsv1.ReplicaSet, error) {
	tmpl := *d.Spec.Template.DeepCopy()
	hash := ComputeHash(&tmpl, d.Status.CollisionCount)
	tmpl.Labels = withLabel(d.Spec.Template.Labels, appsv1.DefaultDeploymentUniqueLabelKey, hash)
	sel := d.Spec.Selector.DeepCopy()
	sel.MatchLabels = withLabel(sel.MatchLabels, appsv1.DefaultDeploymentUniqueLabelKey, hash)
	rs := &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Name: rsName(d.Name, hash), Namespace: d.Namespace, Labels: tmpl.Labels,
			OwnerReferences: []metav1.OwnerReference{replicaset.ControllerRef(d, Kind)}},
		Spec: appsv1.ReplicaSetSpec{Replicas: new(int32), MinReadySeconds: d.Spec.MinReadySeconds, Selector: sel, Template: tmpl},
	}
	n, err := newRSNewReplicas(d, append(append([]*appsv1.ReplicaSet(nil), old...), rs), rs)
	if err != nil {
		return nil, err
	}
	*rs.Spec.Replicas = n
	setNewRSAnnotations(d, rs, newRevision, false)
	return rs, nil
}

// existingOrCollision: an RS of the same name exists. If it is ours with
// the same template, use it; otherwise bump collisionCount so the next
// sync hashes to another name.
func (c *Controller) existingOrCollision(ctx context.Context, d *appsv1.Deployment, rs *appsv1.ReplicaSet) (*appsv1.ReplicaSet, error) {
	cur, err := c.rsLister.ReplicaSets(rs.Namespace).Get(rs.Name)
	if err != nil {
		return nil, err
	}
	if ref := metav1.GetControllerOfNoCopy(cur); ref != nil && ref.UID == d.UID && equalIgnoreHash(&d.Spec.Template, &cur.Spec.Template) {
		return cur.DeepCopy(), nil
	}
	if d.Status.CollisionCount == nil {
		d.Status.CollisionCount = new(int32)
	}
	*d.Status.CollisionCount++
	if err := c.updateStatus(ctx, d); err != nil {
		return nil, err
	}
	return nil, fmt.Errorf("replica set %s/%s exists with another template: collision count now %d", rs.Namespace, rs.Name, *d.Status.CollisionCount)
}

func withLabel(m map[string]string, k, v string) map[string]string {
	out := make(map[string]string, len(m)+1)
	for a, b := range m {
		out[a] = b
	}
	out[k] = v
	return out
}

// rsName is "<deployment>-<hash>", the deployment name cut to fit 253.
func rsName(d, hash string) string {
	if maxLen := validation.DNS1123SubdomainMaxLength - 1 - len(hash); len(d) > maxLen {
		d = d[:maxLen]
	}
	return d + "-" + hash
}
