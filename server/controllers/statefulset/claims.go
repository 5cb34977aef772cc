package statefulset

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// ensureClaims creates the missing claims of the pod at ord (pod may be
// nil when it is about to be created). A claim being deleted is an error:
// the pod must wait for it to go and be recreated.
func (c *Controller) ensureClaims(ctx context.Context, set *appsv1.StatefulSet, pod *corev1.Pod, ord int) error {
	for i := range set.Spec.VolumeClaimTemplates {
		claim := newClaim(set, &set.Spec.VolumeClaimTemplates[i], ord)
		existing, err := c.pvcLister.PersistentVolumeClaims(set.Namespace).Get(claim.Name)
		if err == nil {
			if existing.DeletionTimestamp != nil {
				return fmt.Errorf("persistent volume claim %s/%s is being deleted", set.Namespace, claim.Name)
			}
			continue
		}
		if !apierrors.IsNotFound(err) {
			return err
		}
		_, err = c.client.CoreV1().PersistentVolumeClaims(set.Namespace).Create(ctx, claim, metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) {
			continue
		}
		c.claimEvent(set, claim.Name, podName(set, ord), err)
		if err != nil {
			return fmt.Errorf("creating persistent volume claim %s: %w", claim.Name, err)
		}
	}
	return nil
}

// condemnClaims: with whenScaled: Delete, a surplus pod's claims become
// owned by the pod, so they go with it (upstream's retention policy).
func (c *Controller) condemnClaims(ctx context.Context, set *appsv1.StatefulSet, pod *corev1.Pod) error {
	p := set.Spec.PersistentVolumeClaimRetentionPolicy
	if p == nil || p.WhenScaled != appsv1.DeletePersistentVolumeClaimRetentionPolicyType {
		return nil
	}
	ord := ordinalOf(set, pod)
	for _, t := range set.Spec.VolumeClaimTemplates {
		existing, err := c.pvcLister.PersistentVolumeClaims(set.Namespace).Get(claimName(t.Name, set, ord))
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return err
		}
		if ownedBy(existing, pod.UID) {
			continue
		}
		claim := existing.DeepCopy()
		claim.OwnerReferences = append(claim.OwnerReferences, ownerRef(pod.Name, pod.UID, "v1", "Pod"))
		if _, err := c.client.CoreV1().PersistentVolumeClaims(set.Namespace).Update(ctx, claim, metav1.UpdateOptions{}); err != nil {
			return fmt.Errorf("handing claim %s to pod %s: %w", claim.Name, pod.Name, err)
		}
	}
	return nil
}

func ownedBy(obj metav1.Object, uid types.UID) bool {
	for _, r := range obj.GetOwnerReferences() {
		if r.UID == uid {
			return true
		}
	}
	return false
}

// claimEvent records upstream's recordClaimEvent messages.
func (c *Controller) claimEvent(set *appsv1.StatefulSet, claim, pod string, err error) {
	if err == nil {
		c.recorder.Eventf(set, corev1.EventTypeNormal, "SuccessfulCreate", "create Claim %s Pod %s in StatefulSet %s success", claim, pod, set.Name)
		return
	}
	c.recorder.Eventf(set, corev1.EventTypeWarning, "FailedCreate", "create Claim %s for Pod %s in StatefulSet %s failed error: %s", claim, pod, set.Name, err)
}
