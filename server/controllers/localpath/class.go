package localpath

import (
	"context"
	"fmt"
	"time"

	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	agentlp "github.com/orch/orch/agent/localpath"
	"github.com/orch/orch/server/controllers/pvbinder"
)

// DefaultClass is the StorageClass the controller creates when missing.
func DefaultClass() *storagev1.StorageClass {
	return &storagev1.StorageClass{
		ObjectMeta: metav1.ObjectMeta{Name: agentlp.StorageClassName,
			Annotations: map[string]string{pvbinder.AnnDefaultClass: "true"}},
		Provisioner:       agentlp.ProvisionerName,
		ReclaimPolicy:     ptr.To(corev1.PersistentVolumeReclaimDelete),
		VolumeBindingMode: ptr.To(storagev1.VolumeBindingWaitForFirstConsumer),
	}
}

// EnsureClass creates the default StorageClass unless one of that name
// exists (a user's edits are kept).
func (c *Controller) EnsureClass(ctx context.Context) error {
	_, err := c.client.StorageV1().StorageClasses().Create(ctx, DefaultClass(), metav1.CreateOptions{})
	switch {
	case err == nil:
		c.log.Info("created the default StorageClass", zap.String("name", agentlp.StorageClassName))
	case apierrors.IsAlreadyExists(err):
	default:
		return fmt.Errorf("creating StorageClass %s: %w", agentlp.StorageClassName, err)
	}
	return nil
}

// ensureClassLoop retries EnsureClass with back-off until it succeeds.
func (c *Controller) ensureClassLoop(ctx context.Context) {
	delay := 100 * time.Millisecond
	for {
		err := c.EnsureClass(ctx)
		if err == nil || ctx.Err() != nil {
			return
		}
		c.log.Warn("ensuring the default StorageClass; retrying", zap.Duration("in", delay), zap.Error(err))
		select {
		case <-ctx.Done():
			return
		case <-time.After(delay):
		}
		delay = min(2*delay, 30*time.Second)
	}
}
