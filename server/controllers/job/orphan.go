package job

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
)

// syncOrphanPod removes the tracking finalizer of a pod whose Job is gone
// or finished (confirmed with a live GET, the cache may lag) or that has no
// controller at all (confirmed the same way).
func (c *Controller) syncOrphanPod(ctx context.Context, key string) error {
	ns, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return nil
	}
	p, err := c.pods.Pods(ns).Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	} else if err != nil {
		return err
	}
	if !hasFinalizer(p) {
		return nil
	}
	ref := metav1.GetControllerOf(p)
	switch {
	case ref != nil && jobRef(p) == nil:
		return nil // another kind of controller owns it
	case ref != nil:
		j, err := c.client.BatchV1().Jobs(ns).Get(ctx, ref.Name, metav1.GetOptions{})
		switch {
		case err == nil && j.UID == ref.UID && managedElsewhere(j):
			return nil // the Job's own controller handles its finalizers
		case err == nil && j.UID == ref.UID && !isFinished(j):
			c.queue.Add(ns + "/" + ref.Name) // its Job counts it
			return nil
		case err != nil && !apierrors.IsNotFound(err):
			return fmt.Errorf("get job %s/%s: %w", ns, ref.Name, err)
		}
	default: // a Job may adopt it: only this orphaned version loses the finalizer
		live, err := c.client.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil || metav1.GetControllerOf(live) != nil {
			return ignoreNotFound(err)
		}
		return c.patchOutFinalizer(ctx, live, true)
	}
	return c.removeFinalizer(ctx, p)
}

func ignoreNotFound(err error) error {
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}
