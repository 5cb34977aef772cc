package podautoscaler

import (
	"fmt"
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// setCondition sets (or adds) the condition of type t; its
// lastTransitionTime changes only with its status.
func setCondition(h *autoscalingv2.HorizontalPodAutoscaler, now time.Time, t autoscalingv2.HorizontalPodAutoscalerConditionType,
	status corev1.ConditionStatus, reason, format string, args ...any) {
	var c *autoscalingv2.HorizontalPodAutoscalerCondition
	for i := range h.Status.Conditions {
		if h.Status.Conditions[i].Type == t {
			c = &h.Status.Conditions[i]
			break
		}
	}
	if c == nil {
		h.Status.Conditions = append(h.Status.Conditions, autoscalingv2.HorizontalPodAutoscalerCondition{Type: t})
		c = &h.Status.Conditions[len(h.Status.Conditions)-1]
	}
	if c.Status != status {
		c.LastTransitionTime = metav1.NewTime(now)
	}
	c.Status, c.Reason, c.Message = status, reason, fmt.Sprintf(format, args...)
}

// unableToCompute is the ScalingActive=False condition of a metric that
// could not be computed (reason as upstream: FailedGetResourceMetric, …).
func unableToCompute(reason string, err error) autoscalingv2.HorizontalPodAutoscalerCondition {
	return autoscalingv2.HorizontalPodAutoscalerCondition{Type: autoscalingv2.ScalingActive, Status: corev1.ConditionFalse,
		Reason: reason, Message: fmt.Sprintf("the HPA was unable to compute the replica count: %v", err)}
}
