package schedloop

import (
	"context"
	"errors"
	"fmt"
	"time"

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
	pod, err := r.l.pods.Pods(ns).Get(name)
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
	before, start := r.counts(), time.Now()
	pod = r.withPriority(pod)
	snap, err := r.snapshot(pod)
	if err != nil {
		r.m.attempt("error", start)
		return fmt.Errorf("snapshot: %w", err)
	}
	res, err := scheduler.Schedule(pod, snap, r.sched)
	var fe *scheduler.FitError
	switch {
	case errors.As(err, &fe):
		r.m.attempt("unschedulable", start)
		err = r.fitsNowhere(ctx, pod, snap, fe)
	case errors.Is(err, scheduler.ErrNoNodes):
		r.m.attempt("unschedulable", start)
		err = r.markUnschedulable(ctx, pod, scheduler.ErrNoNodes.Error(), "")
	case err != nil:
		r.m.attempt("error", start)
		return err
	default:
		r.m.attempt("scheduled", start)
		r.assumeAndBind(ctx, pod, res)
		return nil
	}
	if errors.Is(err, errUnschedulable) && r.missed(before, hintsFor(pod)) {
		r.queue.AddRateLimited(k) // an event came while this pod was in flight
	}
	return err
}

// fitsNowhere runs preemption for a pod that fits nowhere, then records
// the failure (with the nominated node, if preemption made room).
func (r *run) fitsNowhere(ctx context.Context, pod *corev1.Pod, snap *scheduler.Snapshot, fe *scheduler.FitError) error {
	pdbs, err := r.pdbs()
	if err != nil {
		return err
	}
	nominated := pod.Status.NominatedNodeName
	if pre := scheduler.Preempt(pod, snap, fe, pdbs); pre != nil {
		if err := r.preempt(ctx, pod, pre); err != nil {
			return err
		}
		nominated = pre.Node
	}
	return r.markUnschedulable(ctx, pod, fe.Error(), nominated)
}

func (r *run) isAssumed(k string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	_, ok := r.assumed[k]
	return ok
}

// assumeAndBind assumes pod on node at once (the next pods see it) and
// binds it in the background, as kube-scheduler's binding cycle: the
// claims get their selected node, then the binding is posted. A failed
// bind forgets the assumption and retries the pod with back-off.
func (r *run) assumeAndBind(ctx context.Context, pod *corev1.Pod, res scheduler.Result) {
	k := key(pod)
	assumed := pod.DeepCopy()
	assumed.Spec.NodeName = res.Node
	r.mu.Lock()
	r.assumed[k] = assumed
	delete(r.unschedulable, k)
	r.mu.Unlock()
	r.binding <- struct{}{}
	r.inflight.Add(1)
	go func() {
		defer func() { <-r.binding; r.inflight.Done() }()
		if err := r.bind(ctx, pod, res); err != nil {
			r.mu.Lock()
			delete(r.assumed, k)
			r.mu.Unlock()
			if ctx.Err() == nil {
				r.c.log.Warn("binding pod", zap.String("pod", k), zap.Error(err))
				r.queue.AddRateLimited(k)
			}
		}
	}()
}

// bind sets the claims' selected node, posts the binding and records Scheduled.
func (r *run) bind(ctx context.Context, pod *corev1.Pod, res scheduler.Result) error {
	if err := r.selectNode(ctx, res.ClaimsToSelect, res.Node); err != nil {
		return err
	}
	b := &corev1.Binding{
		ObjectMeta: metav1.ObjectMeta{Name: pod.Name, Namespace: pod.Namespace, UID: pod.UID},
		Target:     corev1.ObjectReference{Kind: "Node", Name: res.Node},
	}
	if err := r.c.cfg.Client.CoreV1().Pods(pod.Namespace).Bind(ctx, b, metav1.CreateOptions{}); err != nil {
		if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
			r.c.log.Debug("binding pod", zap.String("pod", key(pod)), zap.Error(err))
			r.forget(key(pod))
			return nil // deleted or bound meanwhile: the informer tells the rest
		}
		return fmt.Errorf("bind %s to %s: %w", key(pod), res.Node, err)
	}
	r.recorder.Eventf(pod, corev1.EventTypeNormal, EventScheduled, "Successfully assigned %s/%s to %s", pod.Namespace, pod.Name, res.Node)
	r.c.log.Debug("pod bound", zap.String("pod", key(pod)), zap.String("node", res.Node))
	return nil
}

// markUnschedulable records why pod fits nowhere: the FailedScheduling
// event, and PodScheduled=False (and the nominated node) when they change.
func (r *run) markUnschedulable(ctx context.Context, pod *corev1.Pod, msg, nominated string) error {
	r.mu.Lock()
	r.unschedulable[key(pod)] = hintsFor(pod)
	r.mu.Unlock()
	r.recorder.Event(pod, corev1.EventTypeWarning, EventFailedScheduling, msg)
	if err := r.setCondition(ctx, pod, msg, nominated); err != nil {
		return err
	}
	return fmt.Errorf("%s: %s: %w", key(pod), msg, errUnschedulable)
}

// setCondition sets PodScheduled=False/Unschedulable with msg and
// status.nominatedNodeName unless the pod has exactly those already.
func (r *run) setCondition(ctx context.Context, pod *corev1.Pod, msg, nominated string) error {
	r.mu.Lock()
	last := r.written[key(pod)]
	r.mu.Unlock()
	if last == nominated+"\n"+msg {
		return nil // written already; the cache may not show it yet
	}
	if pod.Status.NominatedNodeName == nominated {
		for _, c := range pod.Status.Conditions {
			if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse &&
				c.Reason == corev1.PodReasonUnschedulable && c.Message == msg {
				return nil
			}
		}
	}
	p := pod.DeepCopy()
	p.Status.NominatedNodeName = nominated
	setPodCondition(&p.Status, corev1.PodCondition{Type: corev1.PodScheduled, Status: corev1.ConditionFalse,
		Reason: corev1.PodReasonUnschedulable, Message: msg})
	if _, err := r.c.cfg.Client.CoreV1().Pods(p.Namespace).UpdateStatus(ctx, p, metav1.UpdateOptions{}); err != nil {
		if apierrors.IsNotFound(err) {
			return nil // gone: the informer tells the rest
		}
		return fmt.Errorf("update status of %s: %w", key(pod), err)
	}
	r.mu.Lock()
	r.written[key(pod)] = nominated + "\n" + msg
	r.mu.Unlock()
	return nil
}

// setPodCondition replaces or appends cond, keeping lastTransitionTime
// when the status does not change.
func setPodCondition(s *corev1.PodStatus, cond corev1.PodCondition) {
	cond.LastTransitionTime = metav1.Now()
	for i, c := range s.Conditions {
		if c.Type == cond.Type {
			if c.Status == cond.Status {
				cond.LastTransitionTime = c.LastTransitionTime
			}
			s.Conditions[i] = cond
			return
		}
	}
	s.Conditions = append(s.Conditions, cond)
}
