// Package podautoscaler is kube-controller-manager's horizontal pod
// autoscaler controller: every sync period (15 s, --horizontal-pod-autoscaler-sync-period)
// it reads each HorizontalPodAutoscaler's target through the scale
// subresource (Deployments, ReplicaSets, StatefulSets, ReplicationControllers
// and custom resources with subresources.scale, resolved by a RESTMapper
// over discovery that is refreshed when a kind is unknown), computes the
// desired replica count from its metrics and writes it back through the
// scale subresource, then updates the HPA's status (currentReplicas,
// desiredReplicas, currentMetrics, lastScaleTime, observedGeneration and
// the AbleToScale, ScalingActive and ScalingLimited conditions) and records
// upstream's Events (SuccessfulRescale, FailedGetScale,
// FailedGetResourceMetric, FailedComputeMetricsReplicas, FailedRescale, …).
//
// Metrics: Resource and ContainerResource metrics (cpu, memory, with
// Utilization or AverageValue targets) are read from metrics.k8s.io/v1beta1
// PodMetrics through the k8s.io/metrics clientset over the in-process
// client, so orch's built-in metrics API and a real metrics-server both
// work. Pod requests come from the shared pod cache. Pods, Object and
// External metrics need the custom/external metrics APIs orch does not
// serve: such a metric gets ScalingActive=False with upstream's
// FailedGetPodsMetric / FailedGetObjectMetric / FailedGetExternalMetric
// reason, and the other metrics of the HPA still count as upstream does.
//
// The arithmetic follows upstream's replica_calculator.go and
// horizontal.go: tolerance 0.1, unready pods and pods without metrics
// (cpu initialization period 5 min, initial readiness delay 30 s) are
// assumed to use 0 % on a scale-up and 100 % on a scale-down; without
// spec.behavior a 5 min downscale stabilization window and the old
// scale-up limit (max(2×current, 4)); with spec.behavior the scale-up and
// scale-down stabilization windows and the Pods/Percent policies over
// their periods with selectPolicy Max, Min or Disabled. The
// recommendations and scale events behind them live in memory only, as
// upstream's do (a new leader starts afresh).
package podautoscaler
