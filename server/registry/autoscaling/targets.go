package autoscaling

import (
	"fmt"
	"strings"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	"k8s.io/apimachinery/pkg/api/resource"
)

const unknown = "<unknown>"

// targets is the Targets cell of `kubectl get hpa` (upstream's
// formatHPAMetrics): current/target per metric, at most two, then
// "+ N more...".
func targets(h *autoscalingv2.HorizontalPodAutoscaler) string {
	specs, statuses := h.Spec.Metrics, h.Status.CurrentMetrics
	if len(specs) == 0 {
		return "<none>"
	}
	var list []string
	for i, spec := range specs {
		var st *autoscalingv2.MetricStatus
		if i < len(statuses) {
			st = &statuses[i]
		}
		list = append(list, metricCell(spec, st))
	}
	if len(list) > 2 {
		return fmt.Sprintf("%s + %d more...", strings.Join(list[:2], ", "), len(list)-2)
	}
	return strings.Join(list, ", ")
}

func metricCell(spec autoscalingv2.MetricSpec, st *autoscalingv2.MetricStatus) string {
	switch {
	case spec.Type == autoscalingv2.ResourceMetricSourceType && spec.Resource != nil:
		var cur *autoscalingv2.MetricValueStatus
		if st != nil && st.Resource != nil {
			cur = &st.Resource.Current
		}
		return resourceCell(string(spec.Resource.Name), spec.Resource.Target, cur)
	case spec.Type == autoscalingv2.ContainerResourceMetricSourceType && spec.ContainerResource != nil:
		var cur *autoscalingv2.MetricValueStatus
		if st != nil && st.ContainerResource != nil {
			cur = &st.ContainerResource.Current
		}
		return resourceCell(string(spec.ContainerResource.Name), spec.ContainerResource.Target, cur)
	case spec.Type == autoscalingv2.PodsMetricSourceType && spec.Pods != nil:
		cur := unknown
		if st != nil && st.Pods != nil {
			cur = quantity(st.Pods.Current.AverageValue)
		}
		return cur + "/" + quantity(spec.Pods.Target.AverageValue)
	case spec.Type == autoscalingv2.ObjectMetricSourceType && spec.Object != nil:
		var cur *autoscalingv2.MetricValueStatus
		if st != nil && st.Object != nil {
			cur = &st.Object.Current
		}
		return valueCell(spec.Object.Target, cur)
	case spec.Type == autoscalingv2.ExternalMetricSourceType && spec.External != nil:
		var cur *autoscalingv2.MetricValueStatus
		if st != nil && st.External != nil {
			cur = &st.External.Current
		}
		return valueCell(spec.External.Target, cur)
	}
	return "<unknown type>"
}

// resourceCell: "cpu: 12%/50%" or, for an AverageValue target, "memory: 10Mi/100Mi".
func resourceCell(name string, target autoscalingv2.MetricTarget, cur *autoscalingv2.MetricValueStatus) string {
	current := unknown
	if target.AverageValue != nil {
		if cur != nil {
			current = quantity(cur.AverageValue)
		}
		return fmt.Sprintf("%s: %s/%s", name, current, target.AverageValue.String())
	}
	if cur != nil && cur.AverageUtilization != nil {
		current = fmt.Sprintf("%d%%", *cur.AverageUtilization)
	}
	t := "<auto>"
	if target.AverageUtilization != nil {
		t = fmt.Sprintf("%d%%", *target.AverageUtilization)
	}
	return fmt.Sprintf("%s: %s/%s", name, current, t)
}

// valueCell: Object and External metrics, "(avg)" for AverageValue targets.
func valueCell(target autoscalingv2.MetricTarget, cur *autoscalingv2.MetricValueStatus) string {
	current := unknown
	if target.AverageValue != nil {
		if cur != nil && cur.AverageValue != nil {
			current = cur.AverageValue.String()
		}
		return fmt.Sprintf("%s/%s (avg)", current, target.AverageValue.String())
	}
	if cur != nil {
		current = quantity(cur.Value)
	}
	return current + "/" + quantity(target.Value)
}

func quantity(q *resource.Quantity) string {
	if q == nil {
		return unknown
	}
	return q.String()
}
