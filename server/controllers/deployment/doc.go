// Package deployment is kube-controller-manager's Deployment controller for
// orch. A Deployment owns one ReplicaSet per pod template: each is named
// "<deployment>-<pod-template-hash>" and carries that hash (upstream's
// ComputeHash: fnv32a of the template and collisionCount, rendered with
// rand.SafeEncodeString) in its labels, selector and pod template, so the
// ReplicaSets never fight over pods.
//
// Rollouts follow the strategy: RollingUpdate scales the new ReplicaSet up
// within maxSurge (rounded up) and the old ones down within maxUnavailable
// (rounded down); Recreate scales the old ones to zero, waits for their pods
// to go and then scales the new one up. The revision annotations
// (deployment.kubernetes.io/revision, revision-history, desired-replicas,
// max-replicas) are kept as upstream keeps them, so `kubectl rollout
// history/undo/status` work; old ReplicaSets beyond revisionHistoryLimit are
// deleted once scaled to zero. A paused Deployment is only scaled. The
// Progressing condition (NewReplicaSetCreated, FoundNewReplicaSet,
// ReplicaSetUpdated, NewReplicaSetAvailable, ProgressDeadlineExceeded,
// DeploymentPaused, DeploymentResumed) and the Available condition are
// upstream's, as are the ScalingReplicaSet events ("Scaled up replica set x
// from 0 to 3").
package deployment
