// Package replicaset is kube-controller-manager's ReplicaSet controller for
// orch: it keeps as many active pods as spec.replicas asks for, creating
// them from the template (generateName "<rs>-") and deleting the least
// valuable first (unassigned, pending, not ready, newest, most restarted),
// adopts orphans its selector matches and releases pods that stop matching
// (ownerReferences with controller=true and blockOwnerDeletion=true), and
// reports replicas, fullyLabeledReplicas, readyReplicas, availableReplicas
// (after minReadySeconds) and the ReplicaFailure condition in its status.
//
// Expectations remember the creations and deletions a sync asked for until
// the shared cache shows them, so a slow cache never leads to pods being
// created or deleted twice. Events and their messages are upstream's:
// SuccessfulCreate "Created pod: x", SuccessfulDelete "Deleted pod: x",
// FailedCreate "Error creating: ...".
//
// The controller reads its owners through Owners (owners.go): New builds
// it over apps/v1 ReplicaSets, NewFor over any kind seen as ReplicaSets —
// server/controllers/replication passes ReplicationControllers.
package replicaset
