package pvbinder

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/tools/cache"
)

// Event reasons (upstream's).
const (
	EventWaitForFirstConsumer = "WaitForFirstConsumer"
	EventExternalProvisioning = "ExternalProvisioning"
	EventFailedBinding        = "FailedBinding"
	EventClaimLost            = "ClaimLost"
	EventVolumeFailedDelete   = "VolumeFailedDelete"
	EventVolumeFailedRecycle  = "VolumeFailedRecycle"
)

func (c *Controller) syncClaim(ctx context.Context, key string) error {
	ns, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return nil
	}
	pvc, err := c.claims.PersistentVolumeClaims(ns).Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("claim %s: %w", key, err)
	}
	if deleting, err := c.syncProtection(ctx, pvc); deleting || err != nil {
		return err
	}
	if pvc.Spec.VolumeName == "" {
		return c.syncUnbound(ctx, pvc)
	}
	return c.syncBound(ctx, pvc)
}

func (c *Controller) syncUnbound(ctx context.Context, pvc *corev1.PersistentVolumeClaim) error {
	class := ClaimClass(pvc, c.classes)
	var sc *storagev1.StorageClass
	if class != "" {
		sc, _ = c.classes.Get(class)
	}
	var node *corev1.Node
	if sc != nil && sc.VolumeBindingMode != nil && *sc.VolumeBindingMode == storagev1.VolumeBindingWaitForFirstConsumer {
		selected := pvc.Annotations[AnnSelectedNode]
		if selected == "" {
			c.rec.Event(pvc, corev1.EventTypeNormal, EventWaitForFirstConsumer, "waiting for first consumer to be created before binding")
			return c.setClaimPending(ctx, pvc)
		}
		if node, _ = c.nodes.Get(selected); node == nil {
			node = &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: selected}}
		}
	}
	pvs, err := c.volumes.List(labels.Everything())
	if err != nil {
		return fmt.Errorf("listing volumes: %w", err)
	}
	if pv := findMatch(pvc, class, pvs, node); pv != nil {
		return c.bind(ctx, pv.DeepCopy(), pvc.DeepCopy())
	}
	switch {
	case sc != nil && sc.Provisioner != NoProvisioner:
		return c.requestProvisioning(ctx, pvc, sc)
	case class != "" && sc == nil:
		c.rec.Eventf(pvc, corev1.EventTypeWarning, "ProvisioningFailed", "storageclass.storage.k8s.io %q not found", class)
	default:
		c.rec.Event(pvc, corev1.EventTypeNormal, EventFailedBinding, "no persistent volumes available for this claim and no storage class is set")
	}
	return c.setClaimPending(ctx, pvc)
}

// requestProvisioning names the class's provisioner on the claim.
func (c *Controller) requestProvisioning(ctx context.Context, pvc *corev1.PersistentVolumeClaim, sc *storagev1.StorageClass) error {
	c.rec.Eventf(pvc, corev1.EventTypeNormal, EventExternalProvisioning,
		"Waiting for a volume to be created either by the external provisioner '%s' or manually by the system administrator. "+
			"If volume creation is delayed, please verify that the provisioner is running and correctly registered.", sc.Provisioner)
	if pvc.Annotations[AnnStorageProvisioner] != sc.Provisioner || pvc.Annotations[AnnBetaStorageProvision] != sc.Provisioner {
		pvc = pvc.DeepCopy()
		if pvc.Annotations == nil {
			pvc.Annotations = map[string]string{}
		}
		pvc.Annotations[AnnStorageProvisioner] = sc.Provisioner
		pvc.Annotations[AnnBetaStorageProvision] = sc.Provisioner
		updated, err := c.client.CoreV1().PersistentVolumeClaims(pvc.Namespace).Update(ctx, pvc, metav1.UpdateOptions{})
		if err != nil {
			return fmt.Errorf("annotating claim %s/%s for provisioning: %w", pvc.Namespace, pvc.Name, err)
		}
		pvc = updated
	}
	return c.setClaimPending(ctx, pvc)
}

// syncBound checks a claim that names its volume and completes the binding.
func (c *Controller) syncBound(ctx context.Context, pvc *corev1.PersistentVolumeClaim) error {
	pv, err := c.volumes.Get(pvc.Spec.VolumeName)
	if apierrors.IsNotFound(err) {
		if pvc.Annotations[AnnBindCompleted] == "" {
			return c.setClaimPending(ctx, pvc) // pre-bound by the user to a volume yet to come
		}
		if pvc.Status.Phase != corev1.ClaimLost {
			c.rec.Event(pvc, corev1.EventTypeWarning, EventClaimLost, "Bound claim has lost its PersistentVolume. Data on the volume is lost!")
		}
		return c.setClaimPhase(ctx, pvc, corev1.ClaimLost)
	}
	if err != nil {
		return fmt.Errorf("volume %s: %w", pvc.Spec.VolumeName, err)
	}
	switch {
	case claimRefIs(pv, pvc):
		return c.bind(ctx, pv.DeepCopy(), pvc.DeepCopy())
	case pv.Spec.ClaimRef == nil && satisfies(pv, pvc, ClaimClass(pvc, c.classes)):
		return c.bind(ctx, pv.DeepCopy(), pvc.DeepCopy())
	case pv.Spec.ClaimRef == nil:
		c.rec.Eventf(pvc, corev1.EventTypeWarning, EventFailedBinding, "Cannot bind to requested volume %q: it does not satisfy the claim", pv.Name)
	case pvc.Annotations[AnnBindCompleted] != "":
		if pvc.Status.Phase != corev1.ClaimLost {
			c.rec.Event(pvc, corev1.EventTypeWarning, EventClaimLost, "Two claims are bound to the same volume, this one is bound incorrectly")
		}
		return c.setClaimPhase(ctx, pvc, corev1.ClaimLost)
	default:
		c.rec.Eventf(pvc, corev1.EventTypeWarning, EventFailedBinding, "volume %q already bound to a different claim.", pv.Name)
	}
	return c.setClaimPending(ctx, pvc)
}
