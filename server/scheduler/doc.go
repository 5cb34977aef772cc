// Package scheduler is orch's pure scheduling core: given a pod and a
// Snapshot of nodes, the pods already on them and (when the pod has
// claims) the PVCs, PVs and StorageClasses, Schedule runs kube-scheduler's
// PreFilter/Filter plugins in the default profile's order (NodeName,
// NodeUnschedulable, TaintToleration, NodeAffinity/NodeSelector,
// NodePorts, NodeResourcesFit, VolumeBinding, PodTopologySpread,
// InterPodAffinity), then its weighted scores (LeastAllocated or
// MostAllocated, BalancedAllocation, preferred NodeAffinity,
// TaintToleration PreferNoSchedule, PodTopologySpread (with the system
// default constraints when Config.DefaultSpreadSelector is set),
// InterPodAffinity, ImageLocality) and returns the chosen node, or a
// *FitError whose message is kube-scheduler's ("0/3 nodes are available:
// 1 Insufficient cpu, 2 node(s) didn't match Pod's node affinity/selector.").
//
// Preempt is DefaultPreemption's PostFilter for such a pod: victims of
// lower priority on the best candidate node (fewest PodDisruptionBudget
// violations, lowest victim priority, fewest victims, ...) and the
// "preemption: ..." part of the FitError message.
//
// Filters, reasons and scores follow kube-scheduler v1.37 (messages
// included: the taint reason is v1.37's "node(s) had untolerated
// taint(s)"). Every node is filtered and scored for every pod (no
// percentageOfNodesToScore sampling); large snapshots are filtered and
// scored on GOMAXPROCS goroutines.
//
// The package does no I/O: no network, no datastore, no containerd. The
// server's loop (server/controllers/schedloop) feeds it snapshots and
// binds through the pods/binding subresource; Harness does the same
// in-process with fake nodes and a RecordingBinder for tests and
// BenchmarkSchedule.
package scheduler
