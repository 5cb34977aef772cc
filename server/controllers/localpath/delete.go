package localpath

import (
	"context"
	"fmt"

	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	agentlp "github.com/orch/orch/agent/localpath"
	"github.com/orch/orch/server/controllers/pvbinder"
)

// syncVolume deletes a Released local-path volume with policy Delete; its
// finalizer keeps it until the node's agent has removed the data.
func (c *Controller) syncVolume(ctx context.Context, name string) error {
	pv, err := c.volumes.Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("volume %s: %w", name, err)
	}
	if pv.Annotations[pvbinder.AnnProvisionedBy] != agentlp.ProvisionerName || pv.DeletionTimestamp != nil ||
		pv.Status.Phase != corev1.VolumeReleased || pv.Spec.PersistentVolumeReclaimPolicy != corev1.PersistentVolumeReclaimDelete {
		return nil
	}
	uid := pv.UID
	err = c.client.CoreV1().PersistentVolumes().Delete(ctx, name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}})
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		return fmt.Errorf("deleting released volume %s: %w", name, err)
	}
	c.log.Info("deleting released volume; its node removes the data", zap.String("volume", name),
		zap.String("node", pv.Labels[agentlp.NodeLabel]))
	return nil
}
