package pvbinder

import (
	"context"
	"fmt"

	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func (c *Controller) syncVolume(ctx context.Context, name string) error {
	pv, err := c.volumes.Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("volume %s: %w", name, err)
	}
	ref := pv.Spec.ClaimRef
	if ref == nil || ref.UID == "" {
		if ref != nil {
			c.claimQ.Add(ref.Namespace + "/" + ref.Name) // pre-bound by the user
		}
		if pv.DeletionTimestamp != nil {
			return nil
		}
		_, err := c.setVolumePhase(ctx, pv, corev1.VolumeAvailable, "")
		return err
	}
	claim, err := c.claimFor(ctx, ref)
	if err != nil {
		return err
	}
	if claim != nil {
		return c.syncClaimed(ctx, pv, claim)
	}
	return c.release(ctx, pv)
}

// claimFor returns the claim pv's claimRef names, nil when it is gone (not
// found or recreated with another UID). A cache miss is confirmed by a
// live read: the claim may be newer than the cache.
func (c *Controller) claimFor(ctx context.Context, ref *corev1.ObjectReference) (*corev1.PersistentVolumeClaim, error) {
	claim, err := c.claims.PersistentVolumeClaims(ref.Namespace).Get(ref.Name)
	if apierrors.IsNotFound(err) {
		claim, err = c.client.CoreV1().PersistentVolumeClaims(ref.Namespace).Get(ctx, ref.Name, metav1.GetOptions{})
	}
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("claim %s/%s: %w", ref.Namespace, ref.Name, err)
	}
	if claim.UID != ref.UID {
		return nil, nil
	}
	return claim, nil
}

// syncClaimed handles a volume whose claim exists.
func (c *Controller) syncClaimed(ctx context.Context, pv *corev1.PersistentVolume, claim *corev1.PersistentVolumeClaim) error {
	switch claim.Spec.VolumeName {
	case "":
		c.claimQ.Add(claim.Namespace + "/" + claim.Name) // binding in progress
		return nil
	case pv.Name:
		_, err := c.setVolumePhase(ctx, pv, corev1.VolumeBound, "")
		return err
	}
	if pv.Annotations[AnnBoundByController] == "" {
		return nil // pre-bound by the user: leave it
	}
	pv = pv.DeepCopy()
	pv.Spec.ClaimRef = nil
	delete(pv.Annotations, AnnBoundByController)
	pv, err := c.client.CoreV1().PersistentVolumes().Update(ctx, pv, metav1.UpdateOptions{})
	if err != nil {
		return fmt.Errorf("unbinding volume %s: %w", pv.Name, err)
	}
	_, err = c.setVolumePhase(ctx, pv, corev1.VolumeAvailable, "")
	return err
}

// release marks a volume whose claim is gone Released and runs its
// reclaim policy.
func (c *Controller) release(ctx context.Context, pv *corev1.PersistentVolume) error {
	if pv.Status.Phase != corev1.VolumeReleased && pv.Status.Phase != corev1.VolumeFailed {
		var err error
		if pv, err = c.setVolumePhase(ctx, pv, corev1.VolumeReleased, ""); err != nil {
			return err
		}
		c.log.Info("volume released", zap.String("volume", pv.Name), zap.String("policy", string(pv.Spec.PersistentVolumeReclaimPolicy)))
	}
	switch pv.Spec.PersistentVolumeReclaimPolicy {
	case corev1.PersistentVolumeReclaimDelete:
		if pv.Annotations[AnnProvisionedBy] != "" || pv.DeletionTimestamp != nil {
			return nil // the provisioner deletes it
		}
		msg := fmt.Sprintf("error getting deleter volume plugin for volume %q: no deletable volume plugin matched", pv.Name)
		return c.fail(ctx, pv, EventVolumeFailedDelete, msg)
	case corev1.PersistentVolumeReclaimRecycle:
		return c.fail(ctx, pv, EventVolumeFailedRecycle, "Recycle is not supported by orch; use Delete or Retain")
	}
	return nil // Retain
}

func (c *Controller) fail(ctx context.Context, pv *corev1.PersistentVolume, reason, msg string) error {
	if pv.Status.Phase == corev1.VolumeFailed {
		return nil
	}
	c.rec.Event(pv, corev1.EventTypeWarning, reason, msg)
	_, err := c.setVolumePhase(ctx, pv, corev1.VolumeFailed, msg)
	return err
}
