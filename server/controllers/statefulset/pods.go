package statefulset

import (
	"context"
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func isTerminal(p *corev1.Pod) bool {
	return p.Status.Phase == corev1.PodFailed || p.Status.Phase == corev1.PodSucceeded
}

func readySince(pod *corev1.Pod) (time.Time, bool) {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.LastTransitionTime.Time, c.Status == corev1.ConditionTrue
		}
	}
	return time.Time{}, false
}

func runningAndReady(p *corev1.Pod) bool {
	_, ok := readySince(p)
	return p.Status.Phase == corev1.PodRunning && ok
}

// available: running and ready for minReadySeconds.
func (c *Controller) available(set *appsv1.StatefulSet, p *corev1.Pod) bool {
	since, ok := readySince(p)
	if p.Status.Phase != corev1.PodRunning || !ok {
		return false
	}
	if set.Spec.MinReadySeconds == 0 {
		return true
	}
	left := since.Add(time.Duration(set.Spec.MinReadySeconds) * time.Second).Sub(c.now())
	if left > 0 {
		c.queue.AddAfter(set.Namespace+"/"+set.Name, left)
		return false
	}
	return true
}

func (c *Controller) healthy(set *appsv1.StatefulSet, p *corev1.Pod) bool {
	return p.DeletionTimestamp == nil && c.available(set, p)
}

// createPod creates the claims, then the pod at index i (ordinal ord);
// below the partition it comes from the current revision.
func (c *Controller) createPod(ctx context.Context, r *run, i, ord int) (*corev1.Pod, error) {
	tpl, rev := &r.set.Spec.Template, r.update.Name
	if ru := r.set.Spec.UpdateStrategy.RollingUpdate; r.set.Spec.UpdateStrategy.Type == appsv1.RollingUpdateStatefulSetStrategyType &&
		ru != nil && ru.Partition != nil && i < int(*ru.Partition) {
		tpl, rev = r.curTpl, r.current.Name
	}
	if err := c.ensureClaims(ctx, r.set, nil, ord); err != nil {
		return nil, err
	}
	pod := newPod(r.set, tpl, ord, rev)
	got, err := c.client.CoreV1().Pods(r.set.Namespace).Create(ctx, pod, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		return pod, nil // the cache is behind; its event wakes us again
	}
	if err != nil {
		c.podEvent(r.set, pod.Name, "create", err)
		return nil, fmt.Errorf("creating pod %s: %w", pod.Name, err)
	}
	c.podEvent(r.set, pod.Name, "create", nil)
	return got, nil
}

func (c *Controller) deletePod(ctx context.Context, set *appsv1.StatefulSet, p *corev1.Pod) error {
	err := c.client.CoreV1().Pods(p.Namespace).Delete(ctx, p.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &p.UID}})
	if apierrors.IsNotFound(err) {
		return nil
	}
	c.podEvent(set, p.Name, "delete", err)
	if err != nil {
		return fmt.Errorf("deleting pod %s: %w", p.Name, err)
	}
	return nil
}

// podEvent records upstream's recordPodEvent messages.
func (c *Controller) podEvent(set *appsv1.StatefulSet, pod, verb string, err error) {
	title := map[string]string{"create": "Create", "delete": "Delete", "update": "Update"}[verb]
	if err == nil {
		c.recorder.Eventf(set, corev1.EventTypeNormal, "Successful"+title, "%s Pod %s in StatefulSet %s successful", verb, pod, set.Name)
		return
	}
	c.recorder.Eventf(set, corev1.EventTypeWarning, "Failed"+title, "%s Pod %s in StatefulSet %s failed error: %s", verb, pod, set.Name, err)
}
