package schedloop

import (
	"context"
	"errors"
	"fmt"

	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/orch/orch/server/scheduler"
)

// errUnschedulable marks a sync that left the pod unschedulable: it waits
// for a cluster event instead of being retried.
var errUnschedulable = errors.New("pod left unschedulable")

func (r *run) processNext(ctx context.Context) bool {
	k, quit := r.queue.Get()
	if quit {
		return false
	}
	defer r.queue.Done(k)
	err := r.sync(ctx, k)
	switch {
	case err == nil:
		r.queue.Forget(k)
	case errors.Is(err, errUnschedulable):
		// keep the failure count: the next cluster event requeues it with back-off
	default:
		r.c.log.Warn("scheduling pod", zap.String("pod", k), zap.Error(err))
		r.queue.AddRateLimited(k)
	}
	return true
}

// sync schedules the pod named by k if it is still pending.
func (r *run) sync(ctx context.Context, k string) error {
	ns, name, err := cache.SplitMetaNamespaceKey(k)
	if err != nil {
		return nil // not a pod key: drop it
	}
	pod, err := r.pods.Pods(ns).Get(name)
	if apierrors.IsNotFound(err) {
		r.forget(k)
		return nil
	}
	if err != nil {
		return fmt.Errorf("get pod %s: %w", k, err)
	}
	if !pending(pod) || r.isAssumed(k) {
		return nil
	}
	snap, err := r.snapshot()
	if err != nil {
		return fmt.Errorf("snapshot: %w", err)
	}
	res, err := scheduler.Schedule(pod, snap, r.c.sched)
	if errors.Is(err, scheduler.ErrUnschedulable) || errors.Is(err, scheduler.ErrNoNodes) {
		return r.markUnschedulable(ctx, pod, err)
	}
	if err != nil {
		return err
	}
	return r.bind(ctx, pod, res.Node)
}

func (r *run) isAssumed(k string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	_, ok := r.assumed[k]
	return ok
}

// bind posts the binding, assumes the pod on node and records Scheduled.
func (r *run) bind(ctx context.Context, pod *corev1.Pod, node string) error {
	b := &corev1.Binding{
		ObjectMeta: metav1.ObjectMeta{Name: pod.Name, Namespace: pod.Namespace, UID: pod.UID},
		Target:     corev1.ObjectReference{Kind: "Node", Name: node},
	}
	if err := r.c.client.CoreV1().Pods(pod.Namespace).Bind(ctx, b, metav1.CreateOptions{}); err != nil {
		if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
			r.c.log.Debug("binding pod", zap.String("pod", key(pod)), zap.Error(err))
			return nil // deleted or bound meanwhile: the informer tells the rest
		}
		return fmt.Errorf("bind %s to %s: %w", key(pod), node, err)
	}
	assumed := pod.DeepCopy()
	assumed.Spec.NodeName = node
	r.mu.Lock()
	r.assumed[key(pod)] = assumed
	delete(r.unschedulable, key(pod))
	r.mu.Unlock()
	r.recorder.Eventf(pod, corev1.EventTypeNormal, EventScheduled, "Successfully assigned %s/%s to %s", pod.Namespace, pod.Name, node)
	r.c.log.Debug("pod bound", zap.String("pod", key(pod)), zap.String("node", node))
	return nil
}

// markUnschedulable records why pod fits nowhere: the FailedScheduling
// event, and PodScheduled=False when the condition changes.
func (r *run) markUnschedulable(ctx context.Context, pod *corev1.Pod, fitErr error) error {
	msg := fitErr.Error()
	var fe *scheduler.FitError
	if errors.As(fitErr, &fe) {
		msg = fe.Error()
	} else if errors.Is(fitErr, scheduler.ErrNoNodes) {
		msg = scheduler.ErrNoNodes.Error()
	}
	r.mu.Lock()
	r.unschedulable[key(pod)] = struct{}{}
	r.mu.Unlock()
	r.recorder.Event(pod, corev1.EventTypeWarning, EventFailedScheduling, msg)
	if err := r.setCondition(ctx, pod, msg); err != nil {
		return err
	}
	return fmt.Errorf("%s: %s: %w", key(pod), msg, errUnschedulable)
}

// setCondition sets PodScheduled=False/Unschedulable with msg unless the
// pod has exactly that already.
func (r *run) setCondition(ctx context.Context, pod *corev1.Pod, msg string) error {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse &&
			c.Reason == corev1.PodReasonUnschedulable && c.Message == msg {
			return nil
		}
	}
	p := pod.DeepCopy()
	cond := corev1.PodCondition{Type: corev1.PodScheduled, Status: corev1.ConditionFalse,
		Reason: corev1.PodReasonUnschedulable, Message: msg, LastTransitionTime: metav1.Now()}
	replaced := false
	for i, c := range p.Status.Conditions {
		if c.Type == corev1.PodScheduled {
			if c.Status == cond.Status {
				cond.LastTransitionTime = c.LastTransitionTime
			}
			p.Status.Conditions[i], replaced = cond, true
		}
	}
	if !replaced {
		p.Status.Conditions = append(p.Status.Conditions, cond)
	}
	if _, err := r.c.client.CoreV1().Pods(p.Namespace).UpdateStatus(ctx, p, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("update status of %s: %w", key(pod), err)
	}
	return nil
}
