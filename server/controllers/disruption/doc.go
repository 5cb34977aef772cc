// Package disruption is kube-controller-manager's disruption controller:
// it keeps every PodDisruptionBudget's status (expectedPods, currentHealthy,
// desiredHealthy, disruptionsAllowed, the DisruptionAllowed condition and
// observedGeneration) in line with the ready pods its selector matches, so
// the API server's eviction subresource can honour it (kubectl drain).
//
// minAvailable and maxUnavailable take numbers or percentages; percentages
// and maxUnavailable are counted against the replicas of the pods'
// controllers (ReplicaSet, StatefulSet, ReplicationController; Deployments
// through their ReplicaSets), or the matching pods when they have none.
// disruptedPods entries the eviction subresource added are kept for two
// minutes or until the pod is gone or terminating, as upstream does.
package disruption
