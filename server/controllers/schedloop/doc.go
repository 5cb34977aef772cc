// Package schedloop is the scheduler's server loop: it watches Pods,
// Nodes, Namespaces, PVCs, PVs, StorageClasses, PodDisruptionBudgets,
// PriorityClasses, Services, ReplicaSets and StatefulSets through shared
// informers, queues pending pods (no spec.nodeName, schedulerName "" or
// "default-scheduler", not terminating, not finished) in a rate-limited
// workqueue, builds a scheduler.Snapshot from the caches plus the pods it
// has assumed (bound or binding, the cache not showing it yet) and the
// pods nominated by preemption, and calls scheduler.Schedule.
//
// A feasible pod is assumed at once and bound in the background (at most
// 16 bindings in flight): first each WaitForFirstConsumer claim gets
// volume.kubernetes.io/selected-node=<node> (the provisioner's cue), then
// the pods/binding subresource is posted. A pod that fits nowhere runs
// scheduler.Preempt: the pod's nominated node is recorded in memory first
// (upstream's nominator: the room stays reserved for it even before its
// status shows the nomination), the victims get a DisruptionTarget
// condition, are deleted with their own grace period and get a Preempted
// event, and the pod gets status.nominatedNodeName. It also gets PodScheduled=False
// (reason Unschedulable, kube-scheduler's message) and a FailedScheduling
// event, and waits for a cluster event that may help it (a coarse form of
// upstream's queueing hints: node added or changed in what scheduling
// reads, pod deleted, pod bound or relabelled, PVC/PV/StorageClass,
// PodDisruptionBudget, namespace or PriorityClass change), retried with
// the queue's back-off, never by polling. Only the Raft leader runs it.
package schedloop
