package podautoscaler

import (
	"context"
	"fmt"
	"time"

	"go.uber.org/zap"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"

	autoscalingreg "github.com/orch/orch/server/registry/autoscaling"
)

// decision is what the metrics (or the min/max bounds) ask of the target.
type decision struct {
	desired  int32
	reason   string
	rescale  bool
	statuses []autoscalingv2.MetricStatus
}

// reconcile is upstream's reconcileAutoscaler: read the target's scale,
// decide, rescale, write the status.
func (c *Controller) reconcile(ctx context.Context, shared *autoscalingv2.HorizontalPodAutoscaler, key string) error {
	h := shared.DeepCopy()
	autoscalingreg.DefaultBehavior(h) // objects stored before the registry defaulted it
	orig := h.Status.DeepCopy()
	now := c.clock.Now()
	ref := h.Spec.ScaleTargetRef
	reference := fmt.Sprintf("%s/%s/%s", ref.Kind, h.Namespace, ref.Name)
	s, gr, err := c.scales.Get(ctx, h.Namespace, ref)
	if err != nil {
		c.recorder.Event(h, corev1.EventTypeWarning, "FailedGetScale", err.Error())
		setCondition(h, now, autoscalingv2.AbleToScale, corev1.ConditionFalse, "FailedGetScale",
			"the HPA controller was unable to get the target's current scale: %v", err)
		c.updateStatusIfNeeded(ctx, orig, h)
		return fmt.Errorf("failed to query scale subresource for %s: %w", reference, err)
	}
	setCondition(h, now, autoscalingv2.AbleToScale, corev1.ConditionTrue, "SucceededGetScale",
		"the HPA controller was able to get the target's current scale")
	current := s.Spec.Replicas
	c.recordInitial(key, current, now)
	d, metricsErr := c.decide(ctx, h, s, key, now)
	if d == nil {
		c.setStatus(h, current, h.Status.DesiredReplicas, h.Status.CurrentMetrics, false, now)
		c.updateStatusIfNeeded(ctx, orig, h)
		c.recorder.Event(h, corev1.EventTypeWarning, "FailedComputeMetricsReplicas", metricsErr.Error())
		return fmt.Errorf("failed to compute desired number of replicas based on listed metrics for %s: %w", reference, metricsErr)
	}
	if d.rescale {
		if err := c.rescale(ctx, h, s, gr, d, now); err != nil {
			c.setStatus(h, current, h.Status.DesiredReplicas, d.statuses, false, now)
			c.updateStatusIfNeeded(ctx, orig, h)
			return fmt.Errorf("failed to rescale %s: %w", reference, err)
		}
		c.mu.Lock()
		c.historyOf(key).storeScaleEvent(now, h.Spec.Behavior, current, d.desired)
		c.mu.Unlock()
		c.log.Info("rescaled", zap.String("hpa", key), zap.Int32("from", current), zap.Int32("to", d.desired), zap.String("reason", d.reason))
	} else {
		d.desired = current
	}
	c.setStatus(h, current, d.desired, d.statuses, d.rescale, now)
	c.updateStatusIfNeeded(ctx, orig, h)
	return metricsErr
}

// decide returns the desired replicas; nil (and the error) when no metric
// could be computed. A non-nil decision may come with the error of some
// metrics that failed while others still count.
func (c *Controller) decide(ctx context.Context, h *autoscalingv2.HorizontalPodAutoscaler, s *autoscalingv1.Scale,
	key string, now time.Time) (*decision, error) {
	current, minReplicas := s.Spec.Replicas, ptr.Deref(h.Spec.MinReplicas, 1)
	switch {
	case current == 0:
		setCondition(h, now, autoscalingv2.ScalingActive, corev1.ConditionFalse, "ScalingDisabled",
			"scaling is disabled since the replica count of the target is zero")
		return &decision{}, nil
	case current > h.Spec.MaxReplicas:
		return &decision{desired: h.Spec.MaxReplicas, reason: "Current number of replicas above Spec.MaxReplicas", rescale: true}, nil
	case current < minReplicas:
		return &decision{desired: minReplicas, reason: "Current number of replicas below Spec.MinReplicas", rescale: true}, nil
	}
	proposal, metric, statuses, err := c.computeReplicasForMetrics(ctx, h, s, now)
	if proposal == -1 {
		h.Status.CurrentMetrics = statuses
		return nil, err
	}
	d := &decision{statuses: statuses}
	rescaleMetric := ""
	if proposal > d.desired {
		d.desired, rescaleMetric = proposal, metric
	}
	if d.desired > current {
		d.reason = fmt.Sprintf("%s above target", rescaleMetric)
	}
	if d.desired < current {
		d.reason = "All metrics below target"
	}
	d.desired = c.normalize(h, key, current, d.desired, minReplicas, now)
	d.rescale = d.desired != current
	return d, err
}

// normalize applies stabilization and the rate limits and sets the
// AbleToScale and ScalingLimited conditions as upstream does.
func (c *Controller) normalize(h *autoscalingv2.HorizontalPodAutoscaler, key string, current, desired, minReplicas int32, now time.Time) int32 {
	c.mu.Lock()
	hist := c.historyOf(key)
	var n normalized
	if h.Spec.Behavior == nil {
		n = hist.normalize(now, c.settings.DownscaleWindow, current, desired, minReplicas, h.Spec.MaxReplicas)
	} else {
		b := h.Spec.Behavior
		if b.ScaleDown.StabilizationWindowSeconds == nil {
			b.ScaleDown.StabilizationWindowSeconds = ptr.To(int32(c.settings.DownscaleWindow.Seconds()))
		}
		n = hist.normalizeWithBehavior(now, b, current, desired, minReplicas, h.Spec.MaxReplicas)
	}
	c.mu.Unlock()
	if n.stabilized {
		setCondition(h, now, autoscalingv2.AbleToScale, corev1.ConditionTrue, n.stabilizeReason, "%s", n.stabilMsg)
	} else {
		setCondition(h, now, autoscalingv2.AbleToScale, corev1.ConditionTrue, "ReadyForNewScale", "recommended size matches current size")
	}
	status := corev1.ConditionFalse
	if n.limited {
		status = corev1.ConditionTrue
	}
	setCondition(h, now, autoscalingv2.ScalingLimited, status, n.limit.reason, "%s", n.limit.message)
	return n.replicas
}

// recordInitial remembers the target's replicas as the first recommendation.
func (c *Controller) recordInitial(key string, current int32, now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if hist := c.historyOf(key); hist.recommendations == nil {
		hist.recommendations = []recommendation{{current, now}}
	}
}

// rescale writes d.desired through the scale subresource, re-reading the
// scale on conflicts, and records the outcome (event and condition).
func (c *Controller) rescale(ctx context.Context, h *autoscalingv2.HorizontalPodAutoscaler, s *autoscalingv1.Scale,
	gr schema.GroupResource, d *decision, now time.Time) error {
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		s.Spec.Replicas = d.desired
		_, err := c.scales.Update(ctx, h.Namespace, gr, s)
		if err == nil || !apierrors.IsConflict(err) {
			return err
		}
		if latest, _, gerr := c.scales.Get(ctx, h.Namespace, h.Spec.ScaleTargetRef); gerr == nil {
			s = latest
		}
		return err
	})
	if err != nil {
		c.recorder.Eventf(h, corev1.EventTypeWarning, "FailedRescale", "New size: %d; reason: %s; error: %v", d.desired, d.reason, err)
		setCondition(h, now, autoscalingv2.AbleToScale, corev1.ConditionFalse, "FailedUpdateScale",
			"the HPA controller was unable to update the target scale: %v", err)
		return err
	}
	setCondition(h, now, autoscalingv2.AbleToScale, corev1.ConditionTrue, "SucceededRescale",
		"the HPA controller was able to update the target scale to %d", d.desired)
	c.recorder.Eventf(h, corev1.EventTypeNormal, "SuccessfulRescale", "New size: %d; reason: %s", d.desired, d.reason)
	return nil
}

// setStatus rebuilds the status around the conditions and lastScaleTime.
func (c *Controller) setStatus(h *autoscalingv2.HorizontalPodAutoscaler, current, desired int32,
	metrics []autoscalingv2.MetricStatus, rescaled bool, now time.Time) {
	h.Status = autoscalingv2.HorizontalPodAutoscalerStatus{CurrentReplicas: current, DesiredReplicas: desired,
		LastScaleTime: h.Status.LastScaleTime, CurrentMetrics: metrics, Conditions: h.Status.Conditions,
		ObservedGeneration: ptr.To(h.Generation)}
	if rescaled {
		h.Status.LastScaleTime = ptr.To(metav1.NewTime(now))
	}
}

// updateStatusIfNeeded writes the status when it changed.
func (c *Controller) updateStatusIfNeeded(ctx context.Context, old *autoscalingv2.HorizontalPodAutoscalerStatus, h *autoscalingv2.HorizontalPodAutoscaler) {
	if apiequality.Semantic.DeepEqual(old, &h.Status) {
		return
	}
	if _, err := c.hpaClient.HorizontalPodAutoscalers(h.Namespace).UpdateStatus(ctx, h, metav1.UpdateOptions{}); err != nil {
		c.recorder.Event(h, corev1.EventTypeWarning, "FailedUpdateStatus", err.Error())
		c.log.Debug("updating status", zap.String("hpa", h.Namespace+"/"+h.Name), zap.Error(err))
	}
}
