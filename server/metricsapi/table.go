package metricsapi

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	metricsv1beta1 "k8s.io/metrics/pkg/apis/metrics/v1beta1"
)

// usageColumns follow Name in `kubectl get nodemetrics|podmetrics`, as
// metrics-server prints them.
var usageColumns = []metav1.TableColumnDefinition{
	{Name: "cpu", Type: "string", Format: "quantity"},
	{Name: "memory", Type: "string", Format: "quantity"},
	{Name: "Window", Type: "string", Format: "duration"},
}

func nodeRow(obj runtime.Object) []interface{} {
	m := obj.(*metricsv1beta1.NodeMetrics)
	return usageCells(m.Usage, m.Window)
}

// podRow sums the containers' usage.
func podRow(obj runtime.Object) []interface{} {
	m := obj.(*metricsv1beta1.PodMetrics)
	sum := corev1.ResourceList{}
	for _, c := range m.Containers {
		for k, v := range c.Usage {
			q := sum[k]
			q.Add(v)
			sum[k] = q
		}
	}
	return usageCells(sum, m.Window)
}

func usageCells(u corev1.ResourceList, w metav1.Duration) []interface{} {
	cpu, mem := u[corev1.ResourceCPU], u[corev1.ResourceMemory]
	return []interface{}{cpu.String(), mem.String(), w.Duration.String()}
}
