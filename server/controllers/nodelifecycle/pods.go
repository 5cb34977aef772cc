package nodelifecycle

import (
	"context"
	"fmt"
	"time"

	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"

	"github.com/orch/orch/server/controllers/kit"
)

// orphanQuarantine is how long a pod's Node must be missing before the
// pod is force-deleted (upstream PodGC's quarantineTime).
const orphanQuarantine = 40 * time.Second

// missingFor records when nodeName was first seen missing and returns how
// much of the quarantine is left.
func (c *Controller) missingFor(nodeName string) time.Duration {
	now := c.clock.Now()
	c.missingMu.Lock()
	defer c.missingMu.Unlock()
	first, ok := c.missing[nodeName]
	if !ok {
		c.missing[nodeName] = now
		first = now
	}
	return orphanQuarantine - now.Sub(first)
}

// syncPod evicts a pod whose node has NoExecute taints it does not
// tolerate (now or when its tolerationSeconds run out) and force-deletes
// pods bound to Nodes that no longer exist; both get the DisruptionTarget
// condition first.
func (c *Controller) syncPod(ctx context.Context, key string) error {
	ns, podName, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return nil
	}
	obj, exists, err := c.pods.GetByKey(key)
	if err != nil || !exists {
		return err
	}
	pod := obj.(*corev1.Pod)
	if pod.Spec.NodeName == "" {
		return nil
	}
	node, err := c.nodes.Get(pod.Spec.NodeName)
	if apierrors.IsNotFound(err) {
		return c.collectOrphan(ctx, pod)
	}
	if err != nil || pod.DeletionTimestamp != nil {
		return err
	}
	now := c.clock.Now()
	at, evict := evictionTime(pod, node.Spec.Taints, now)
	if !evict {
		return nil
	}
	if wait := at.Sub(now); wait > 0 {
		c.podQ.AddAfter(key, wait)
		return nil
	}
	c.log.Info("evicting pod from tainted node", zap.String("pod", key), zap.String("node", node.Name))
	c.recorder.Eventf(pod, corev1.EventTypeNormal, "TaintManagerEviction", "Marking for deletion Pod %s/%s", ns, podName)
	if err := c.markDisrupted(ctx, pod, taintEvictionCondition, false); err != nil {
		return err
	}
	err = c.client.CoreV1().Pods(ns).Delete(ctx, podName, metav1.DeleteOptions{Preconditions: metav1.NewUIDPreconditions(string(pod.UID))})
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		return fmt.Errorf("evicting %s: %w", key, err)
	}
	return nil
}

// collectOrphan force-deletes a pod whose Node has been missing for the
// quarantine time (upstream PodGC's 40s: a Node may be created after its
// pods were bound), after checking with a live read that the Node really
// does not exist (the cache may lag).
func (c *Controller) collectOrphan(ctx context.Context, pod *corev1.Pod) error {
	if wait := c.missingFor(pod.Spec.NodeName); wait > 0 {
		kit.Requeue(c.podQ, pod.Namespace+"/"+pod.Name, wait)
		return nil
	}
	_, err := c.client.CoreV1().Nodes().Get(ctx, pod.Spec.NodeName, metav1.GetOptions{})
	if err == nil {
		return nil
	}
	if !apierrors.IsNotFound(err) {
		return err
	}
	c.log.Info("deleting pod of a deleted node", zap.String("pod", pod.Namespace+"/"+pod.Name), zap.String("node", pod.Spec.NodeName))
	if err := c.markDisrupted(ctx, pod, podGCCondition, true); err != nil {
		return err
	}
	err = c.client.CoreV1().Pods(pod.Namespace).Delete(ctx, pod.Name, metav1.DeleteOptions{
		GracePeriodSeconds: ptr.To[int64](0), Preconditions: metav1.NewUIDPreconditions(string(pod.UID))})
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		return fmt.Errorf("deleting orphaned pod %s/%s: %w", pod.Namespace, pod.Name, err)
	}
	c.forgetMissingIfDone(pod)
	return nil
}

// forgetMissingIfDone drops the quarantine record of pod's Node once no
// other pod in the cache is bound to it, so names of Nodes that never come
// back do not pile up.
func (c *Controller) forgetMissingIfDone(pod *corev1.Pod) {
	objs, err := c.pods.ByIndex(podNodeIndex, pod.Spec.NodeName)
	if err != nil {
		return
	}
	for _, o := range objs {
		if o.(*corev1.Pod).UID != pod.UID {
			return
		}
	}
	c.missingMu.Lock()
	delete(c.missing, pod.Spec.NodeName)
	c.missingMu.Unlock()
}
