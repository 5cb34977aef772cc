package pvbinder

import (
	"context"
	"fmt"
	"slices"

	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/tools/cache"
)

// ProtectionFinalizer keeps a claim that pods still use from being
// removed (upstream's PVC protection): its volume is not released while a
// pod may be writing to it.
const ProtectionFinalizer = "kubernetes.io/pvc-protection"

// syncProtection adds the finalizer to a live claim and removes it from a
// deleted claim that no pod uses. It reports whether the claim is gone
// from the binder's point of view (being deleted).
func (c *Controller) syncProtection(ctx context.Context, pvc *corev1.PersistentVolumeClaim) (bool, error) {
	has := slices.Contains(pvc.Finalizers, ProtectionFinalizer)
	if pvc.DeletionTimestamp == nil {
		if has {
			return false, nil
		}
		pvc = pvc.DeepCopy()
		pvc.Finalizers = append(pvc.Finalizers, ProtectionFinalizer)
		if _, err := c.client.CoreV1().PersistentVolumeClaims(pvc.Namespace).Update(ctx, pvc, metav1.UpdateOptions{}); err != nil {
			return false, fmt.Errorf("adding %s to claim %s/%s: %w", ProtectionFinalizer, pvc.Namespace, pvc.Name, err)
		}
		return false, nil
	}
	if !has {
		return true, nil
	}
	used, err := c.claimInUse(ctx, pvc)
	if err != nil || used != "" {
		if used != "" {
			c.log.Debug("claim being deleted is still in use", zap.String("claim", pvc.Namespace+"/"+pvc.Name), zap.String("pod", used))
		}
		return true, err
	}
	pvc = pvc.DeepCopy()
	pvc.Finalizers = slices.DeleteFunc(pvc.Finalizers, func(f string) bool { return f == ProtectionFinalizer })
	if _, err := c.client.CoreV1().PersistentVolumeClaims(pvc.Namespace).Update(ctx, pvc, metav1.UpdateOptions{}); err != nil && !apierrors.IsNotFound(err) {
		return true, fmt.Errorf("removing %s from claim %s/%s: %w", ProtectionFinalizer, pvc.Namespace, pvc.Name, err)
	}
	return true, nil
}

// claimInUse names a pod that is not finished and uses pvc ("" = none).
// The cache says "unused" only after a live list agrees, as upstream does:
// a pod created a moment ago may not be cached yet.
func (c *Controller) claimInUse(ctx context.Context, pvc *corev1.PersistentVolumeClaim) (string, error) {
	pods, err := c.pods.Pods(pvc.Namespace).List(labels.Everything())
	if err != nil {
		return "", fmt.Errorf("listing pods: %w", err)
	}
	if p := podUsing(pods, pvc.Name); p != "" {
		return p, nil
	}
	live, err := c.client.CoreV1().Pods(pvc.Namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return "", fmt.Errorf("listing pods: %w", err)
	}
	ptrs := make([]*corev1.Pod, len(live.Items))
	for i := range live.Items {
		ptrs[i] = &live.Items[i]
	}
	return podUsing(ptrs, pvc.Name), nil
}

func podUsing(pods []*corev1.Pod, claim string) string {
	for _, p := range pods {
		if p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
			continue
		}
		for _, n := range podClaims(p) {
			if n == claim {
				return p.Name
			}
		}
	}
	return ""
}

// podClaims lists the claims a pod uses (generic ephemeral volumes too).
func podClaims(p *corev1.Pod) []string {
	var out []string
	for _, v := range p.Spec.Volumes {
		switch {
		case v.PersistentVolumeClaim != nil:
			out = append(out, v.PersistentVolumeClaim.ClaimName)
		case v.Ephemeral != nil:
			out = append(out, p.Name+"-"+v.Name)
		}
	}
	return out
}

// podHandler requeues the claims of a pod that finished or went away.
func (c *Controller) podHandler() cache.ResourceEventHandler {
	requeue := func(obj any) {
		if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = t.Obj
		}
		if p, ok := obj.(*corev1.Pod); ok {
			for _, n := range podClaims(p) {
				c.claimQ.Add(p.Namespace + "/" + n)
			}
		}
	}
	return cache.ResourceEventHandlerFuncs{
		UpdateFunc: func(_, obj any) {
			if p, ok := obj.(*corev1.Pod); ok && (p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed) {
				requeue(p)
			}
		},
		DeleteFunc: requeue,
	}
}
