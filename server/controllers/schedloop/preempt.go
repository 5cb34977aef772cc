package schedloop

import (
	"context"
	"fmt"

	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/orch/orch/server/scheduler"
)

// preempt evicts the victims as upstream's executor does: a
// DisruptionTarget condition (reason PreemptionByScheduler), a delete with
// the victim's own grace period and a Preempted event on the victim.
func (r *run) preempt(ctx context.Context, pod *corev1.Pod, pre *scheduler.Preemption) error {
	r.nominate(key(pod), pre.Node) // before the victims go: their replacements must not take the room
	for _, v := range pre.Victims {
		if err := r.evict(ctx, v); err != nil {
			return err
		}
		r.recorder.Eventf(v, corev1.EventTypeNormal, EventPreempted, "Preempted by pod %s on node %s", pod.UID, pre.Node)
		r.c.log.Info("preempted pod", zap.String("victim", key(v)), zap.String("preemptor", key(pod)), zap.String("node", pre.Node))
	}
	return r.clearLowerNominations(ctx, pod, pre.Node)
}

// clearLowerNominations drops the nomination of lower-priority pods for
// node, as upstream does: the room made there is the preemptor's.
func (r *run) clearLowerNominations(ctx context.Context, pod *corev1.Pod, node string) error {
	pods, err := r.l.pods.List(labels.Everything())
	if err != nil {
		return err
	}
	prio := scheduler.PodPriority(pod)
	for _, p := range pods {
		if p.Status.NominatedNodeName != node || !pending(p) || key(p) == key(pod) || scheduler.PodPriority(p) >= prio {
			continue
		}
		r.nominate(key(p), "")
		c := p.DeepCopy()
		c.Status.NominatedNodeName = ""
		if _, err := r.c.cfg.Client.CoreV1().Pods(c.Namespace).UpdateStatus(ctx, c, metav1.UpdateOptions{}); err != nil && !apierrors.IsNotFound(err) {
			r.c.log.Debug("clearing nominated node", zap.String("pod", key(p)), zap.Error(err))
		}
	}
	return nil
}

func (r *run) evict(ctx context.Context, victim *corev1.Pod) error {
	pods := r.c.cfg.Client.CoreV1().Pods(victim.Namespace)
	v := victim.DeepCopy()
	setPodCondition(&v.Status, corev1.PodCondition{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue,
		Reason: corev1.PodReasonPreemptionByScheduler, Message: SchedulerName + ": preempting to accommodate a higher priority pod"})
	if _, err := pods.UpdateStatus(ctx, v, metav1.UpdateOptions{}); err != nil && !apierrors.IsNotFound(err) {
		r.c.log.Debug("DisruptionTarget condition", zap.String("pod", key(victim)), zap.Error(err))
	}
	opts := metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &victim.UID}}
	if victim.UID == "" {
		opts.Preconditions = nil
	}
	if err := pods.Delete(ctx, victim.Name, opts); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("preempt %s: %w", key(victim), err)
	}
	return nil
}

// pdbs converts the PodDisruptionBudgets for preemption. Budgets whose
// status no disruption controller maintains (observedGeneration 0) get
// disruptionsAllowed computed here from their selector and the pods.
func (r *run) pdbs() ([]scheduler.PDB, error) {
	list, err := r.l.pdbs.List(labels.Everything())
	if err != nil || len(list) == 0 {
		return nil, err
	}
	out := make([]scheduler.PDB, 0, len(list))
	for _, b := range list {
		sel, err := metav1.LabelSelectorAsSelector(b.Spec.Selector)
		if err != nil || b.Spec.Selector == nil {
			continue
		}
		p := scheduler.PDB{Namespace: b.Namespace, Selector: sel, DisruptionsAllowed: b.Status.DisruptionsAllowed,
			DisruptedPods: b.Status.DisruptedPods}
		if b.Status.ObservedGeneration == 0 {
			if p.DisruptionsAllowed, err = r.disruptionsAllowed(b, sel); err != nil {
				return nil, err
			}
		}
		out = append(out, p)
	}
	return out, nil
}

// disruptionsAllowed is the disruption controller's arithmetic with the
// expected count taken as the number of selected pods.
func (r *run) disruptionsAllowed(b *policyv1.PodDisruptionBudget, sel labels.Selector) (int32, error) {
	pods, err := r.l.pods.Pods(b.Namespace).List(sel)
	if err != nil {
		return 0, err
	}
	var expected, healthy int
	for _, p := range pods {
		if p.DeletionTimestamp != nil || p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
			continue
		}
		expected++
		if podReady(p) {
			healthy++
		}
	}
	var desired int
	switch {
	case b.Spec.MaxUnavailable != nil:
		n, err := intstr.GetScaledValueFromIntOrPercent(b.Spec.MaxUnavailable, expected, true)
		if err != nil {
			return 0, nil
		}
		desired = max(0, expected-n)
	case b.Spec.MinAvailable != nil:
		n, err := intstr.GetScaledValueFromIntOrPercent(b.Spec.MinAvailable, expected, true)
		if err != nil {
			return 0, nil
		}
		desired = n
	default:
		return 0, nil
	}
	return int32(max(0, healthy-desired)), nil
}

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
