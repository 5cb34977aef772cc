package nodelifecycle

import (
	"context"
	"fmt"
	"time"

	"go.uber.org/zap"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/orch/orch/server/controllers/kit"
)

// syncNode brings one node's conditions, taints and pods in line with its
// heartbeat.
func (c *Controller) syncNode(ctx context.Context, key string) error {
	node, err := c.nodes.Get(key)
	if apierrors.IsNotFound(err) {
		c.obs.forget(key)
		return c.enqueuePodsOn(key)
	}
	if err != nil {
		return err
	}
	c.missingMu.Lock()
	delete(c.missing, node.Name)
	c.missingMu.Unlock()
	now := c.clock.Now()
	lease, err := c.leases.Leases(leaseNamespace).Get(node.Name)
	if err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	if err := c.checkHealth(ctx, node, lease, now); err != nil {
		return err
	}
	if err := c.syncTaints(ctx, node, now); err != nil {
		return err
	}
	if readyStatus(node) != corev1.ConditionTrue {
		if err := c.markPodsNotReady(ctx, node.Name); err != nil {
			return err
		}
	}
	return c.enqueuePodsOn(node.Name)
}

// checkHealth marks node Unknown once its heartbeat is older than the
// grace period, else requeues it for when it would be.
func (c *Controller) checkHealth(ctx context.Context, node *corev1.Node, lease *coordinationv1.Lease, now time.Time) error {
	last := c.obs.observe(node, lease, now)
	left := c.grace - now.Sub(last)
	if left > 0 {
		c.nodeQ.AddAfter(node.Name, left+time.Second)
		return nil
	}
	if readyStatus(node) == corev1.ConditionUnknown && condition(node, corev1.NodeReady) != nil {
		return nil
	}
	upd := node.DeepCopy()
	if !markUnknown(upd, now) {
		return nil
	}
	c.log.Info("node stopped posting status", zap.String("node", node.Name), zap.Duration("since", now.Sub(last)))
	c.recorder.Eventf(upd, corev1.EventTypeNormal, "NodeNotReady", "Node %s status is now: NodeNotReady", node.Name)
	_, err := c.client.CoreV1().Nodes().UpdateStatus(ctx, upd, metav1.UpdateOptions{})
	if err != nil {
		return fmt.Errorf("marking node %s Unknown: %w", node.Name, err)
	}
	return nil
}

// syncTaints makes the node's managed taints match its conditions.
func (c *Controller) syncTaints(ctx context.Context, node *corev1.Node, now time.Time) error {
	taints, changed := mergeTaints(node.Spec.Taints, desiredTaints(node), now)
	if !changed {
		return nil
	}
	upd := node.DeepCopy()
	upd.Spec.Taints = taints
	_, err := c.client.CoreV1().Nodes().Update(ctx, upd, metav1.UpdateOptions{})
	if err != nil {
		return fmt.Errorf("tainting node %s: %w", node.Name, err)
	}
	return nil
}

// markPodsNotReady sets Ready=False on the pods of a node that is not
// ready, as upstream's MarkPodsNotReady does, so endpoints drop them.
func (c *Controller) markPodsNotReady(ctx context.Context, nodeName string) error {
	objs, err := c.pods.ByIndex(podNodeIndex, nodeName)
	if err != nil {
		return err
	}
	for _, o := range objs {
		pod := o.(*corev1.Pod)
		if pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed {
			continue
		}
		upd := pod.DeepCopy()
		if !setPodNotReady(upd) {
			continue
		}
		if _, err := c.client.CoreV1().Pods(pod.Namespace).UpdateStatus(ctx, upd, metav1.UpdateOptions{}); err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
			return fmt.Errorf("marking pod %s/%s not ready: %w", pod.Namespace, pod.Name, err)
		}
	}
	return nil
}

func setPodNotReady(pod *corev1.Pod) bool {
	for i := range pod.Status.Conditions {
		c := &pod.Status.Conditions[i]
		if c.Type == corev1.PodReady && c.Status != corev1.ConditionFalse {
			c.Status, c.Reason, c.LastTransitionTime = corev1.ConditionFalse, "NodeNotReady", metav1.Now()
			return true
		}
	}
	return false
}

func (c *Controller) enqueuePodsOn(nodeName string) error {
	objs, err := c.pods.ByIndex(podNodeIndex, nodeName)
	if err != nil {
		return err
	}
	for _, o := range objs {
		kit.Enqueue(c.podQ, o)
	}
	return nil
}
