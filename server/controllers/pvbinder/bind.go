package pvbinder

import (
	"context"
	"fmt"

	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// bind binds pv and pvc (both private copies) both ways, volume first.
// Every step is skipped when already done.
func (c *Controller) bind(ctx context.Context, pv *corev1.PersistentVolume, pvc *corev1.PersistentVolumeClaim) error {
	pv, err := c.bindVolume(ctx, pv, pvc)
	if err != nil {
		return err
	}
	if pvc.Spec.VolumeName != pv.Name || pvc.Annotations[AnnBindCompleted] != "yes" {
		if pvc.Annotations == nil {
			pvc.Annotations = map[string]string{}
		}
		if pvc.Spec.VolumeName == "" {
			pvc.Annotations[AnnBoundByController] = "yes"
		}
		pvc.Spec.VolumeName = pv.Name
		pvc.Annotations[AnnBindCompleted] = "yes"
		if pvc, err = c.client.CoreV1().PersistentVolumeClaims(pvc.Namespace).Update(ctx, pvc, metav1.UpdateOptions{}); err != nil {
			return fmt.Errorf("binding claim %s/%s to volume %s: %w", pvc.Namespace, pvc.Name, pv.Name, err)
		}
		c.log.Info("claim bound", zap.String("claim", pvc.Namespace+"/"+pvc.Name), zap.String("volume", pv.Name))
	}
	st := pvc.Status.DeepCopy()
	st.Phase, st.AccessModes = corev1.ClaimBound, pv.Spec.AccessModes
	st.Capacity = corev1.ResourceList{corev1.ResourceStorage: pv.Spec.Capacity[corev1.ResourceStorage]}
	if apiequality.Semantic.DeepEqual(*st, pvc.Status) {
		return nil
	}
	pvc.Status = *st
	if _, err := c.client.CoreV1().PersistentVolumeClaims(pvc.Namespace).UpdateStatus(ctx, pvc, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("claim %s/%s status: %w", pvc.Namespace, pvc.Name, err)
	}
	return nil
}

func (c *Controller) bindVolume(ctx context.Context, pv *corev1.PersistentVolume, pvc *corev1.PersistentVolumeClaim) (*corev1.PersistentVolume, error) {
	if r := pv.Spec.ClaimRef; r == nil || r.UID != pvc.UID {
		if r == nil {
			if pv.Annotations == nil {
				pv.Annotations = map[string]string{}
			}
			pv.Annotations[AnnBoundByController] = "yes"
		}
		pv.Spec.ClaimRef = &corev1.ObjectReference{Kind: "PersistentVolumeClaim", APIVersion: "v1",
			Namespace: pvc.Namespace, Name: pvc.Name, UID: pvc.UID, ResourceVersion: pvc.ResourceVersion}
		var err error
		if pv, err = c.client.CoreV1().PersistentVolumes().Update(ctx, pv, metav1.UpdateOptions{}); err != nil {
			return nil, fmt.Errorf("binding volume %s to claim %s/%s: %w", pv.Name, pvc.Namespace, pvc.Name, err)
		}
	}
	return c.setVolumePhase(ctx, pv, corev1.VolumeBound, "")
}

func (c *Controller) setVolumePhase(ctx context.Context, pv *corev1.PersistentVolume, phase corev1.PersistentVolumePhase, msg string) (*corev1.PersistentVolume, error) {
	if pv.Status.Phase == phase && pv.Status.Message == msg {
		return pv, nil
	}
	pv = pv.DeepCopy()
	now := metav1.Now()
	pv.Status.Phase, pv.Status.Message, pv.Status.LastPhaseTransitionTime = phase, msg, &now
	out, err := c.client.CoreV1().PersistentVolumes().UpdateStatus(ctx, pv, metav1.UpdateOptions{})
	if err != nil {
		return nil, fmt.Errorf("volume %s phase %s: %w", pv.Name, phase, err)
	}
	return out, nil
}

func (c *Controller) setClaimPending(ctx context.Context, pvc *corev1.PersistentVolumeClaim) error {
	return c.setClaimPhase(ctx, pvc, corev1.ClaimPending)
}

func (c *Controller) setClaimPhase(ctx context.Context, pvc *corev1.PersistentVolumeClaim, phase corev1.PersistentVolumeClaimPhase) error {
	if pvc.Status.Phase == phase {
		return nil
	}
	pvc = pvc.DeepCopy()
	pvc.Status.Phase = phase
	if phase == corev1.ClaimPending {
		pvc.Status.Capacity, pvc.Status.AccessModes = nil, nil
	}
	if _, err := c.client.CoreV1().PersistentVolumeClaims(pvc.Namespace).UpdateStatus(ctx, pvc, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("claim %s/%s phase %s: %w", pvc.Namespace, pvc.Name, phase, err)
	}
	return nil
}
