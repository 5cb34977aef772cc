// Package scheduler is orch's pure scheduling core: given a pod and a
// Snapshot of nodes and the pods already on them, Schedule runs
// kube-scheduler's filter plugins (NodeUnschedulable, NodeName,
// TaintToleration, NodeAffinity/NodeSelector, NodePorts, NodeResourcesFit),
// then its weighted scores (LeastAllocated or MostAllocated,
// BalancedAllocation, preferred NodeAffinity, TaintToleration
// PreferNoSchedule) and returns the chosen node, or a *FitError whose
// message is kube-scheduler's ("0/3 nodes are available: 1 Insufficient
// cpu, 2 node(s) didn't match Pod's node affinity/selector.").
//
// Filters, reasons and scores follow kube-scheduler v1.37 (default
// profile order and weights; pod requests as component-helpers computes
// them, sidecars and overhead included). Every node is filtered and scored
// for every pod (no percentageOfNodesToScore sampling).
//
// The package does no I/O: no network, no datastore, no containerd. The
// server's loop (server/controllers/schedloop) feeds it snapshots and
// binds through the pods/binding subresource; Harness does the same
// in-process with fake nodes and a RecordingBinder for tests and
// BenchmarkSchedule.
package scheduler
