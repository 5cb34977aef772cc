// Package replication is kube-controller-manager's ReplicationController
// manager for orch. As upstream's pkg/controller/replication, it is the
// ReplicaSet controller (server/controllers/replicaset) run over core/v1
// ReplicationControllers converted in memory to apps/v1 ReplicaSets: the
// map selector becomes matchLabels, the template pointer a value, and the
// status written back loses what RCs do not have (terminatingReplicas).
// Pods get the RC as their controller (kind ReplicationController,
// apiVersion v1), events are recorded on the RC with the source
// "replication-controller", and everything else — slow-start creation,
// expectations, adoption and release, deletion ranking, the ReplicaFailure
// condition — is the ReplicaSet controller's.
package replication
