package job

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
)

// syncOrphanPod removes the tracking finalizer of a pod whose Job is gone
// (confirmed with a live GET, the cache may lag) or that has no Job at all.
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
	if ref := metav1.GetControllerOf(p); ref != nil && ref.Kind == "Job" {
		j, err := c.client.BatchV1().Jobs(ns).Get(ctx, ref.Name, metav1.GetOptions{})
		switch {
		case err == nil && j.UID == ref.UID:
			c.queue.Add(ns + "/" + ref.Name) // its Job counts it
			return nil
		case err != nil && !apierrors.IsNotFound(err):
			return fmt.Errorf("get job %s/%s: %w", ns, ref.Name, err)
		}
	}
	return c.removeFinalizer(ctx, p)
}
