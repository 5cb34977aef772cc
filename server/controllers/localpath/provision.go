package localpath

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"

	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"

	agentlp "github.com/orch/orch/agent/localpath"
	"github.com/orch/orch/server/controllers/pvbinder"
)

// Event reasons (the external provisioners' names).
const (
	EventProvisioning          = "Provisioning"
	EventProvisioningSucceeded = "ProvisioningSucceeded"
	EventProvisioningFailed    = "ProvisioningFailed"
	hostnameLabel              = "kubernetes.io/hostname"
)

// errNoStorageDir: the node's agent has not reported its storage dir yet.
var errNoStorageDir = errors.New("node has not reported its local-path storage dir")

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
	sc := c.wantsUs(pvc)
	if sc == nil {
		return nil
	}
	pvName := "pvc-" + string(pvc.UID)
	if _, err := c.volumes.Get(pvName); err == nil {
		return nil // provisioned; pvbinder binds it
	}
	if msg := unsupported(pvc); msg != "" {
		c.rec.Event(pvc, corev1.EventTypeWarning, EventProvisioningFailed, msg)
		return nil
	}
	nodeName := pvc.Annotations[pvbinder.AnnSelectedNode]
	if nodeName == "" {
		c.rec.Event(pvc, corev1.EventTypeWarning, EventProvisioningFailed,
			"configuration error, no node was specified: local-path volumes need a WaitForFirstConsumer class")
		return nil
	}
	dir, err := c.storageDir(nodeName)
	if err != nil {
		c.rec.Eventf(pvc, corev1.EventTypeWarning, EventProvisioningFailed, "failed to provision volume: %v", err)
		if errors.Is(err, errNoStorageDir) {
			return nil // the node's update requeues the claim
		}
		return err
	}
	c.rec.Eventf(pvc, corev1.EventTypeNormal, EventProvisioning, "External provisioner is provisioning volume for claim %q", key)
	pv := buildVolume(pvName, pvc, sc, nodeName, agentlp.VolumePath(dir, pvName, pvc.Namespace, pvc.Name))
	if _, err := c.client.CoreV1().PersistentVolumes().Create(ctx, pv, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		c.rec.Eventf(pvc, corev1.EventTypeWarning, EventProvisioningFailed, "failed to provision volume: %v", err)
		return fmt.Errorf("creating volume %s for claim %s: %w", pvName, key, err)
	}
	c.log.Info("provisioned volume", zap.String("volume", pvName), zap.String("claim", key), zap.String("node", nodeName),
		zap.String("path", pv.Spec.HostPath.Path))
	c.rec.Eventf(pvc, corev1.EventTypeNormal, EventProvisioningSucceeded, "Successfully provisioned volume %s", pvName)
	return nil
}

// wantsUs returns the claim's class when this provisioner must serve it.
func (c *Controller) wantsUs(pvc *corev1.PersistentVolumeClaim) *storagev1.StorageClass {
	if pvc.Spec.VolumeName != "" || pvc.DeletionTimestamp != nil ||
		(pvc.Annotations[pvbinder.AnnStorageProvisioner] != agentlp.ProvisionerName &&
			pvc.Annotations[pvbinder.AnnBetaStorageProvision] != agentlp.ProvisionerName) {
		return nil
	}
	class := pvbinder.ClaimClass(pvc, c.classes)
	if class == "" {
		return nil
	}
	sc, err := c.classes.Get(class)
	if err != nil || sc.Provisioner != agentlp.ProvisionerName {
		return nil
	}
	return sc
}

// unsupported says why the claim cannot be a local-path volume ("" = it can).
func unsupported(pvc *corev1.PersistentVolumeClaim) string {
	if m := pvc.Spec.VolumeMode; m != nil && *m != corev1.PersistentVolumeFilesystem {
		return "failed to provision volume: local-path supports only volumeMode Filesystem"
	}
	for _, m := range pvc.Spec.AccessModes {
		if m != corev1.ReadWriteOnce && m != corev1.ReadWriteOncePod {
			return fmt.Sprintf("failed to provision volume: local-path supports only ReadWriteOnce and ReadWriteOncePod access modes, not %s", m)
		}
	}
	return ""
}

// storageDir is the directory the node's agent reported.
func (c *Controller) storageDir(nodeName string) (string, error) {
	node, err := c.nodes.Get(nodeName)
	if apierrors.IsNotFound(err) {
		return "", fmt.Errorf("node %q not found", nodeName)
	}
	if err != nil {
		return "", fmt.Errorf("node %q: %w", nodeName, err)
	}
	dir := node.Annotations[agentlp.NodeDirAnnotation]
	switch {
	case dir == "":
		return "", fmt.Errorf("%w: node %q has no annotation %s yet (is its agent running?)", errNoStorageDir, nodeName, agentlp.NodeDirAnnotation)
	case !filepath.IsAbs(dir):
		return "", fmt.Errorf("node %q: annotation %s=%q is not an absolute path", nodeName, agentlp.NodeDirAnnotation, dir)
	}
	return filepath.Clean(dir), nil
}

func buildVolume(name string, pvc *corev1.PersistentVolumeClaim, sc *storagev1.StorageClass, node, path string) *corev1.PersistentVolume {
	policy := corev1.PersistentVolumeReclaimDelete
	if sc.ReclaimPolicy != nil {
		policy = *sc.ReclaimPolicy
	}
	return &corev1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{agentlp.NodeLabel: node},
			Annotations: map[string]string{pvbinder.AnnProvisionedBy: agentlp.ProvisionerName},
			Finalizers:  []string{agentlp.Finalizer}},
		Spec: corev1.PersistentVolumeSpec{
			Capacity:                      corev1.ResourceList{corev1.ResourceStorage: pvc.Spec.Resources.Requests[corev1.ResourceStorage]},
			AccessModes:                   pvc.Spec.AccessModes,
			PersistentVolumeReclaimPolicy: policy,
			StorageClassName:              sc.Name,
			MountOptions:                  sc.MountOptions,
			VolumeMode:                    ptr.To(corev1.PersistentVolumeFilesystem),
			PersistentVolumeSource: corev1.PersistentVolumeSource{HostPath: &corev1.HostPathVolumeSource{
				Path: path, Type: ptr.To(corev1.HostPathDirectoryOrCreate)}},
			ClaimRef: &corev1.ObjectReference{Kind: "PersistentVolumeClaim", APIVersion: "v1",
				Namespace: pvc.Namespace, Name: pvc.Name, UID: pvc.UID, ResourceVersion: pvc.ResourceVersion},
			NodeAffinity: &corev1.VolumeNodeAffinity{Required: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
				MatchExpressions: []corev1.NodeSelectorRequirement{{Key: hostnameLabel, Operator: corev1.NodeSelectorOpIn, Values: []string{node}}},
			}}}},
		},
	}
}
