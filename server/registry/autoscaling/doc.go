// Package autoscaling serves HorizontalPodAutoscalers as autoscaling/v2
// (defaults, validation, kubectl columns, status subresource) and, stored
// as v2, as autoscaling/v1 with upstream's conversion: the CPU utilization
// target and status in v1's fields, other metrics, the behavior and the
// conditions in the autoscaling.alpha.kubernetes.io annotations (written
// in v2's format). The controller that acts on them is not part of orch
// yet.
package autoscaling
