// Package autoscaling serves autoscaling/v2 HorizontalPodAutoscaler objects
// (defaults, validation, kubectl columns, status subresource). The
// controller that acts on them is not part of orch yet.
package autoscaling
