package podautoscaler

import (
	"errors"
	"fmt"
	"math"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// Upstream's defaults (kube-controller-manager flags).
const (
	defaultTolerance               = 0.1
	defaultCPUInitializationPeriod = 5 * time.Minute
	defaultInitialReadinessDelay   = 30 * time.Second
	defaultSyncPeriod              = 15 * time.Second
	defaultDownscaleWindow         = 5 * time.Minute
)

// podMetric is one pod's usage (milli-units) and the sample's time and window.
type podMetric struct {
	Timestamp time.Time
	Window    time.Duration
	Value     int64
}

// podMetrics maps pod names to their usage.
type podMetrics map[string]podMetric

// errNoMetrics: no pod of the target reported a usable sample.
var errNoMetrics = errors.New("did not receive metrics for targeted pods (pods might be unready)")

// tolerances are the usage ratio bands within which nothing changes.
type tolerances struct{ down, up float64 }

func (t tolerances) within(ratio float64) bool { return 1-t.down <= ratio && ratio <= 1+t.up }

// calcInput is what one resource metric's replica count is computed from.
type calcInput struct {
	currentReplicas int32
	resource        corev1.ResourceName
	container       string
	pods            []*corev1.Pod
	metrics         podMetrics
	tol             tolerances
	now             time.Time
	cpuInitPeriod   time.Duration
	readinessDelay  time.Duration
}

// resourceUtilizationReplicas is upstream's GetResourceReplicas after the
// metrics were fetched: the replica count for a target utilization (percent
// of the pods' requests), the current utilization and the raw average usage.
func resourceUtilizationReplicas(in calcInput, target int32) (int32, int32, int64, error) {
	if len(in.pods) == 0 {
		return 0, 0, 0, errors.New("no pods returned by selector while calculating replica count")
	}
	g := groupPods(in)
	metrics := g.usable(in.metrics)
	if len(metrics) == 0 {
		return 0, 0, 0, errNoMetrics
	}
	requests, err := calculateRequests(in.pods, in.container, in.resource)
	if err != nil {
		return 0, 0, 0, err
	}
	ratio, utilization, raw, err := utilizationRatio(metrics, requests, target)
	if err != nil {
		return 0, 0, 0, err
	}
	fallback := func(name string) int64 { return requests[name] * int64(max(100, target)) / 100 }
	if !g.fillMissing(metrics, ratio, fallback) {
		if in.tol.within(ratio) {
			return in.currentReplicas, utilization, raw, nil
		}
		return int32(math.Ceil(ratio * float64(g.ready))), utilization, raw, nil
	}
	newRatio, _, _, err := utilizationRatio(metrics, requests, target)
	if err != nil {
		return 0, utilization, raw, err
	}
	return settle(in, ratio, newRatio, len(metrics)), utilization, raw, nil
}

// resourceValueReplicas is upstream's GetRawResourceReplicas (an
// AverageValue target, milli-units): the replica count and the average usage.
func resourceValueReplicas(in calcInput, target int64) (int32, int64, error) {
	if len(in.pods) == 0 {
		return 0, 0, errors.New("no pods returned by selector while calculating replica count")
	}
	g := groupPods(in)
	metrics := g.usable(in.metrics)
	if len(metrics) == 0 {
		return 0, 0, errNoMetrics
	}
	ratio, usage := usageRatio(metrics, target)
	if !g.fillMissing(metrics, ratio, func(string) int64 { return target }) {
		if in.tol.within(ratio) {
			return in.currentReplicas, usage, nil
		}
		return int32(math.Ceil(ratio * float64(g.ready))), usage, nil
	}
	newRatio, _ := usageRatio(metrics, target)
	return settle(in, ratio, newRatio, len(metrics)), usage, nil
}

// settle is the end of upstream's calculation once unready and missing
// pods were filled in: no change within tolerance or when the filled-in
// ratio (or pod count) would reverse the direction of the scale.
func settle(in calcInput, ratio, newRatio float64, n int) int32 {
	if in.tol.within(newRatio) || (ratio < 1 && newRatio > 1) || (ratio > 1 && newRatio < 1) {
		return in.currentReplicas
	}
	replicas := int32(math.Ceil(newRatio * float64(n)))
	if (newRatio < 1 && replicas > in.currentReplicas) || (newRatio > 1 && replicas < in.currentReplicas) {
		return in.currentReplicas
	}
	return replicas
}

// utilizationRatio is upstream's GetResourceUtilizationRatio.
func utilizationRatio(metrics podMetrics, requests map[string]int64, target int32) (float64, int32, int64, error) {
	var usage, requested int64
	n := 0
	for name, m := range metrics {
		r, ok := requests[name]
		if !ok {
			continue
		}
		usage += m.Value
		requested += r
		n++
	}
	if requested == 0 {
		return 0, 0, 0, errors.New("no metrics returned matched known pods")
	}
	utilization := int32(usage * 100 / requested)
	return float64(utilization) / float64(target), utilization, usage / int64(n), nil
}

// usageRatio is upstream's GetMetricUsageRatio.
func usageRatio(metrics podMetrics, target int64) (float64, int64) {
	var total int64
	for _, m := range metrics {
		total += m.Value
	}
	usage := total / int64(len(metrics))
	return float64(usage) / float64(target), usage
}

// podGroups sorts the target's pods as upstream's groupPods does.
type podGroups struct {
	ready                     int
	unready, missing, ignored map[string]bool
}

// usable copies metrics without the ignored and unready pods' samples.
func (g podGroups) usable(metrics podMetrics) podMetrics {
	out := make(podMetrics, len(metrics))
	for name, m := range metrics {
		if !g.ignored[name] && !g.unready[name] {
			out[name] = m
		}
	}
	return out
}

// fillMissing gives pods without samples (and, on a scale-up, unready
// pods) an assumed usage: 0 on a scale-up, fallback on a scale-down. It
// reports whether the calculation has to be redone.
func (g podGroups) fillMissing(metrics podMetrics, ratio float64, fallback func(string) int64) bool {
	upWithUnready := len(g.unready) > 0 && ratio > 1
	if !upWithUnready && len(g.missing) == 0 {
		return false
	}
	for name := range g.missing {
		switch {
		case ratio < 1:
			metrics[name] = podMetric{Value: fallback(name)}
		case ratio > 1:
			metrics[name] = podMetric{}
		}
	}
	if upWithUnready {
		for name := range g.unready {
			metrics[name] = podMetric{}
		}
	}
	return true
}

// groupPods: deleted and failed pods are ignored; pending pods are
// unready; pods without a sample are missing; for cpu, pods still
// initializing (or never ready) are unready.
func groupPods(in calcInput) podGroups {
	g := podGroups{unready: map[string]bool{}, missing: map[string]bool{}, ignored: map[string]bool{}}
	for _, pod := range in.pods {
		if pod.DeletionTimestamp != nil || pod.Status.Phase == corev1.PodFailed {
			g.ignored[pod.Name] = true
			continue
		}
		if pod.Status.Phase == corev1.PodPending {
			g.unready[pod.Name] = true
			continue
		}
		m, ok := in.metrics[pod.Name]
		if !ok {
			g.missing[pod.Name] = true
			continue
		}
		if in.resource == corev1.ResourceCPU && cpuUnready(in, pod, m) {
			g.unready[pod.Name] = true
			continue
		}
		g.ready++
	}
	return g
}

// cpuUnready: within the cpu initialization period a sample counts only
// once the pod is ready and a whole window was measured since; after it,
// a pod that is unready and never was ready is ignored.
func cpuUnready(in calcInput, pod *corev1.Pod, m podMetric) bool {
	cond := podCondition(pod, corev1.PodReady)
	if cond == nil || pod.Status.StartTime == nil {
		return true
	}
	start := pod.Status.StartTime.Time
	if start.Add(in.cpuInitPeriod).After(in.now) {
		return cond.Status == corev1.ConditionFalse || m.Timestamp.Before(cond.LastTransitionTime.Add(m.Window))
	}
	return cond.Status == corev1.ConditionFalse && start.Add(in.readinessDelay).After(cond.LastTransitionTime.Time)
}

func podCondition(pod *corev1.Pod, t corev1.PodConditionType) *corev1.PodCondition {
	for i := range pod.Status.Conditions {
		if pod.Status.Conditions[i].Type == t {
			return &pod.Status.Conditions[i]
		}
	}
	return nil
}

// calculateRequests maps pod names to their request of resource
// (milli-units): the named container's, else the pod-level request when
// set, else the sum over the containers and restartable init containers.
func calculateRequests(pods []*corev1.Pod, container string, resource corev1.ResourceName) (map[string]int64, error) {
	out := make(map[string]int64, len(pods))
	for _, pod := range pods {
		if container == "" && pod.Spec.Resources != nil {
			if q, ok := pod.Spec.Resources.Requests[resource]; ok {
				out[pod.Name] = q.MilliValue()
				continue
			}
		}
		r, err := containerRequests(pod, container, resource)
		if err != nil {
			return nil, err
		}
		out[pod.Name] = r
	}
	return out, nil
}

func containerRequests(pod *corev1.Pod, container string, resource corev1.ResourceName) (int64, error) {
	containers := append([]corev1.Container{}, pod.Spec.Containers...)
	for _, c := range pod.Spec.InitContainers {
		if c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways {
			containers = append(containers, c)
		}
	}
	var total int64
	for _, c := range containers {
		if container != "" && c.Name != container {
			continue
		}
		q, ok := c.Resources.Requests[resource]
		if !ok {
			return 0, fmt.Errorf("missing request for %s in container %s of Pod %s", resource, c.Name, pod.Name)
		}
		if container != "" {
			return q.MilliValue(), nil
		}
		total += q.MilliValue()
	}
	if container != "" {
		return 0, fmt.Errorf("container %s not found in Pod %s", container, pod.Name)
	}
	return total, nil
}
