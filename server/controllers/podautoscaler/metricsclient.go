package podautoscaler

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	metricsv1beta1 "k8s.io/metrics/pkg/apis/metrics/v1beta1"
	metricsclient "k8s.io/metrics/pkg/client/clientset/versioned/typed/metrics/v1beta1"
)

// metricsSource reads the resource usage of the pods a selector matches
// (upstream's MetricsClient.GetResourceMetric): per pod, the named
// container's usage or the sum over its containers, in milli-units, and
// the time of the first sample. Pods without a sample are left out.
type metricsSource interface {
	ResourceMetric(ctx context.Context, resource corev1.ResourceName, namespace string, sel labels.Selector, container string) (podMetrics, time.Time, error)
}

// restMetrics reads metrics.k8s.io/v1beta1 PodMetrics (orch's built-in
// metrics API or a metrics-server behind its APIService).
type restMetrics struct {
	client metricsclient.PodMetricsesGetter
}

var _ metricsSource = (*restMetrics)(nil)

// ResourceMetric lists the PodMetrics the selector matches.
func (r *restMetrics) ResourceMetric(ctx context.Context, resource corev1.ResourceName, namespace string, sel labels.Selector, container string) (podMetrics, time.Time, error) {
	list, err := r.client.PodMetricses(namespace).List(ctx, metav1.ListOptions{LabelSelector: sel.String()})
	if err != nil {
		return nil, time.Time{}, fmt.Errorf("unable to fetch metrics from resource metrics API: %w", err)
	}
	if len(list.Items) == 0 {
		return nil, time.Time{}, errors.New("no metrics returned from resource metrics API")
	}
	return podUsage(list.Items, resource, container), list.Items[0].Timestamp.Time, nil
}

// podUsage turns PodMetrics into per-pod usage of resource: the named
// container's, or the sum over all containers (a pod with a container
// missing the resource, or with no containers, has no sample).
func podUsage(items []metricsv1beta1.PodMetrics, resource corev1.ResourceName, container string) podMetrics {
	out := make(podMetrics, len(items))
	for _, m := range items {
		var sum int64
		found := container == "" && len(m.Containers) > 0
		for _, c := range m.Containers {
			v, ok := c.Usage[resource]
			if container != "" {
				if c.Name == container {
					found, sum = ok, v.MilliValue()
					break
				}
				continue
			}
			if !ok {
				found = false
				break
			}
			sum += v.MilliValue()
		}
		if found {
			out[m.Name] = podMetric{Timestamp: m.Timestamp.Time, Window: m.Window.Duration, Value: sum}
		}
	}
	return out
}
