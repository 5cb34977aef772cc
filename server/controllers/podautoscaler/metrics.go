package podautoscaler

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/labels"
)

// Custom and external metrics need APIs orch does not serve.
var (
	errCustomMetrics   = errors.New("unable to fetch metrics from custom metrics API: custom.metrics.k8s.io is not supported by orch's HPA controller")
	errExternalMetrics = errors.New("unable to fetch metrics from external metrics API: external.metrics.k8s.io is not supported by orch's HPA controller")
)

// computeReplicasForMetrics is upstream's: the highest proposal of the
// metrics that could be computed. It returns -1 when none could, or when
// some failed and the others would scale down (then ScalingActive is the
// first failure's condition).
func (c *Controller) computeReplicasForMetrics(ctx context.Context, h *autoscalingv2.HorizontalPodAutoscaler, s *autoscalingv1.Scale,
	now time.Time) (int32, string, []autoscalingv2.MetricStatus, error) {
	sel, err := c.parseSelector(h, s.Status.Selector, now)
	if err != nil {
		return -1, "", nil, err
	}
	specs := h.Spec.Metrics
	statuses := make([]autoscalingv2.MetricStatus, len(specs))
	var replicas int32
	var metric string
	invalid := 0
	var firstErr error
	var firstCond autoscalingv2.HorizontalPodAutoscalerCondition
	for i, spec := range specs {
		proposal, name, cond, err := c.computeReplicasForMetric(ctx, h, spec, s.Spec.Replicas, sel, &statuses[i], now)
		if err != nil {
			if invalid == 0 {
				firstErr, firstCond = err, cond
			}
			invalid++
			continue
		}
		if replicas == 0 || proposal > replicas {
			replicas, metric = proposal, name
		}
	}
	if firstErr != nil {
		firstErr = fmt.Errorf("invalid metrics (%v invalid out of %v), first error is: %w", invalid, len(specs), firstErr)
	}
	if invalid >= len(specs) || (invalid > 0 && replicas < s.Spec.Replicas) {
		setCondition(h, now, firstCond.Type, firstCond.Status, firstCond.Reason, "%s", firstCond.Message)
		return -1, "", statuses, firstErr
	}
	setCondition(h, now, autoscalingv2.ScalingActive, corev1.ConditionTrue, "ValidMetricFound",
		"the HPA was able to successfully calculate a replica count from %s", metric)
	return replicas, metric, statuses, firstErr
}

// parseSelector checks the target's selector and that its pods are not
// also selected by another HPA (upstream's validateAndParseSelector).
func (c *Controller) parseSelector(h *autoscalingv2.HorizontalPodAutoscaler, selector string, now time.Time) (labels.Selector, error) {
	fail := func(event, reason, msg string) error {
		c.recorder.Event(h, corev1.EventTypeWarning, event, msg)
		setCondition(h, now, autoscalingv2.ScalingActive, corev1.ConditionFalse, reason, "%s", msg)
		return errors.New(msg)
	}
	if selector == "" {
		c.recorder.Event(h, corev1.EventTypeWarning, "SelectorRequired", "selector is required")
		setCondition(h, now, autoscalingv2.ScalingActive, corev1.ConditionFalse, "InvalidSelector", "the HPA target's scale is missing a selector")
		return nil, errors.New("selector is required")
	}
	sel, err := labels.Parse(selector)
	if err != nil {
		return nil, fail("InvalidSelector", "InvalidSelector", fmt.Sprintf("couldn't convert selector into a corresponding internal selector object: %v", err))
	}
	pods, err := c.pods.Pods(h.Namespace).List(sel)
	if err != nil {
		return nil, err
	}
	if others := c.trackSelector(h, sel, pods); len(others) > 1 {
		return nil, fail("AmbiguousSelector", "AmbiguousSelector",
			fmt.Sprintf("pods by selector %v are controlled by more than one HPA (e.g. %v)", selector, others))
	}
	return sel, nil
}

// trackSelector records h's selector and returns the HPAs (h included)
// whose selectors match any of pods.
func (c *Controller) trackSelector(h *autoscalingv2.HorizontalPodAutoscaler, sel labels.Selector, pods []*corev1.Pod) []string {
	key := h.Namespace + "/" + h.Name
	c.mu.Lock()
	defer c.mu.Unlock()
	c.selectors[key] = sel
	var out []string
	for k, s := range c.selectors {
		if len(k) <= len(h.Namespace) || k[:len(h.Namespace)+1] != h.Namespace+"/" {
			continue
		}
		for _, p := range pods {
			if s.Matches(labels.Set(p.Labels)) {
				out = append(out, k)
				break
			}
		}
	}
	sort.Strings(out)
	return out
}

// computeReplicasForMetric computes one metric's proposal and status.
func (c *Controller) computeReplicasForMetric(ctx context.Context, h *autoscalingv2.HorizontalPodAutoscaler, spec autoscalingv2.MetricSpec,
	specReplicas int32, sel labels.Selector, status *autoscalingv2.MetricStatus,
	now time.Time) (int32, string, autoscalingv2.HorizontalPodAutoscalerCondition, error) {
	fail := func(reason string, err, wrapped error) (int32, string, autoscalingv2.HorizontalPodAutoscalerCondition, error) {
		c.recorder.Event(h, corev1.EventTypeWarning, reason, err.Error())
		return 0, "", unableToCompute(reason, err), wrapped
	}
	switch spec.Type {
	case autoscalingv2.ResourceMetricSourceType:
		if spec.Resource == nil {
			err := errors.New("invalid resource metric source: no resource given")
			return fail("FailedGetResourceMetric", err, err)
		}
		r, st, name, err := c.resourceMetric(ctx, h, specReplicas, spec.Resource.Target, spec.Resource.Name, "", sel, now)
		if err != nil {
			return fail("FailedGetResourceMetric", err, fmt.Errorf("failed to get %s resource metric value: %w", spec.Resource.Name, err))
		}
		*status = autoscalingv2.MetricStatus{Type: spec.Type, Resource: &autoscalingv2.ResourceMetricStatus{Name: spec.Resource.Name, Current: *st}}
		return r, name, autoscalingv2.HorizontalPodAutoscalerCondition{}, nil
	case autoscalingv2.ContainerResourceMetricSourceType:
		cr := spec.ContainerResource
		if cr == nil {
			err := errors.New("invalid container resource metric source: no resource given")
			return fail("FailedGetContainerResourceMetric", err, err)
		}
		r, st, name, err := c.resourceMetric(ctx, h, specReplicas, cr.Target, cr.Name, cr.Container, sel, now)
		if err != nil {
			return fail("FailedGetContainerResourceMetric", err, fmt.Errorf("failed to get %s container metric value: %w", cr.Container, err))
		}
		*status = autoscalingv2.MetricStatus{Type: spec.Type,
			ContainerResource: &autoscalingv2.ContainerResourceMetricStatus{Name: cr.Name, Container: cr.Container, Current: *st}}
		return r, name, autoscalingv2.HorizontalPodAutoscalerCondition{}, nil
	}
	return c.unsupportedMetric(h, spec, fail)
}

// unsupportedMetric fails Pods, Object and External metrics the way
// upstream fails them when their metrics API does not answer.
func (c *Controller) unsupportedMetric(h *autoscalingv2.HorizontalPodAutoscaler, spec autoscalingv2.MetricSpec,
	fail func(string, error, error) (int32, string, autoscalingv2.HorizontalPodAutoscalerCondition, error)) (int32, string, autoscalingv2.HorizontalPodAutoscalerCondition, error) {
	switch {
	case spec.Type == autoscalingv2.PodsMetricSourceType && spec.Pods != nil:
		err := fmt.Errorf("unable to get metric %s: %w", spec.Pods.Metric.Name, errCustomMetrics)
		return fail("FailedGetPodsMetric", err, fmt.Errorf("failed to get pods metric value: %w", err))
	case spec.Type == autoscalingv2.ObjectMetricSourceType && spec.Object != nil:
		o := spec.Object
		err := fmt.Errorf("unable to get metric %s on %s %s/%s: %w", o.Metric.Name, o.DescribedObject.Kind, h.Namespace, o.DescribedObject.Name, errCustomMetrics)
		return fail("FailedGetObjectMetric", err, fmt.Errorf("failed to get object metric value: %w", err))
	case spec.Type == autoscalingv2.ExternalMetricSourceType && spec.External != nil:
		e := spec.External
		err := fmt.Errorf("unable to get external metric %s/%s/%+v: %w", h.Namespace, e.Metric.Name, e.Metric.Selector, errExternalMetrics)
		return fail("FailedGetExternalMetric", err, fmt.Errorf("failed to get %s external metric value: %w", e.Metric.Name, err))
	}
	err := fmt.Errorf("unknown metric source type %q", string(spec.Type))
	return fail("InvalidMetricSourceType", err, err)
}

// resourceMetric is upstream's computeStatusForResourceMetricGeneric.
func (c *Controller) resourceMetric(ctx context.Context, h *autoscalingv2.HorizontalPodAutoscaler, current int32, target autoscalingv2.MetricTarget,
	res corev1.ResourceName, container string, sel labels.Selector, now time.Time) (int32, *autoscalingv2.MetricValueStatus, string, error) {
	if target.AverageValue != nil {
		in, err := c.calcInput(ctx, h, current, res, container, sel, now)
		if err != nil {
			return 0, nil, "", fmt.Errorf("failed to get %s usage: %w", res, err)
		}
		r, usage, err := resourceValueReplicas(in, target.AverageValue.MilliValue())
		if err != nil {
			return 0, nil, "", fmt.Errorf("failed to get %s usage: %w", res, err)
		}
		q := buildQuantity(res, usage)
		return r, &autoscalingv2.MetricValueStatus{AverageValue: &q}, fmt.Sprintf("%s resource", res), nil
	}
	if target.AverageUtilization == nil {
		return 0, nil, "", errors.New("invalid resource metric source: neither an average utilization target nor an average value (usage) target was set")
	}
	in, err := c.calcInput(ctx, h, current, res, container, sel, now)
	if err != nil {
		return 0, nil, "", fmt.Errorf("failed to get %s utilization: %w", res, err)
	}
	r, util, raw, err := resourceUtilizationReplicas(in, *target.AverageUtilization)
	if err != nil {
		return 0, nil, "", fmt.Errorf("failed to get %s utilization: %w", res, err)
	}
	name := fmt.Sprintf("%s resource utilization (percentage of request)", res)
	if container != "" {
		name = fmt.Sprintf("%s container resource utilization (percentage of request)", res)
	}
	q := buildQuantity(res, raw)
	return r, &autoscalingv2.MetricValueStatus{AverageUtilization: &util, AverageValue: &q}, name, nil
}

// calcInput fetches the metrics and the target's pods.
func (c *Controller) calcInput(ctx context.Context, h *autoscalingv2.HorizontalPodAutoscaler, current int32, res corev1.ResourceName,
	container string, sel labels.Selector, now time.Time) (calcInput, error) {
	metrics, _, err := c.metrics.ResourceMetric(ctx, res, h.Namespace, sel, container)
	if err != nil {
		return calcInput{}, fmt.Errorf("unable to get metrics for resource %s: %w", res, err)
	}
	pods, err := c.pods.Pods(h.Namespace).List(sel)
	if err != nil {
		return calcInput{}, fmt.Errorf("unable to get pods while calculating replica count: %w", err)
	}
	return calcInput{currentReplicas: current, resource: res, container: container, pods: pods, metrics: metrics,
		tol: c.tolerances(h), now: now, cpuInitPeriod: c.settings.CPUInitPeriod, readinessDelay: c.settings.ReadinessDelay}, nil
}

// tolerances are the controller's, or spec.behavior's per direction.
func (c *Controller) tolerances(h *autoscalingv2.HorizontalPodAutoscaler) tolerances {
	t := tolerances{c.settings.Tolerance, c.settings.Tolerance}
	if b := h.Spec.Behavior; b != nil {
		if b.ScaleDown != nil && b.ScaleDown.Tolerance != nil {
			t.down = b.ScaleDown.Tolerance.AsApproximateFloat64()
		}
		if b.ScaleUp != nil && b.ScaleUp.Tolerance != nil {
			t.up = b.ScaleUp.Tolerance.AsApproximateFloat64()
		}
	}
	return t
}

// buildQuantity formats a milli-unit usage: memory in binary units as
// metrics-server does, everything else as decimal (cpu in m).
func buildQuantity(res corev1.ResourceName, milli int64) resource.Quantity {
	format := resource.DecimalSI
	if res == corev1.ResourceMemory {
		format = resource.BinarySI
	}
	return *resource.NewMilliQuantity(milli, format)
}
