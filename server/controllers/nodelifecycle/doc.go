// Package nodelifecycle is kube-controller-manager's node lifecycle
// controller, taint-based eviction and pod GC in one leader-only loop:
//
//   - health: a node whose Lease (kube-node-lease) has not been renewed for
//     the grace period (--node-monitor-grace-period, 40s) gets every
//     condition set to Unknown ("Kubelet stopped posting node status."),
//     and the pods on it are marked Ready=False;
//   - taints by condition: Ready=False → node.kubernetes.io/not-ready,
//     Ready=Unknown → node.kubernetes.io/unreachable (NoExecute and
//     NoSchedule), pressure conditions → memory-/disk-/pid-pressure,
//     NetworkUnavailable → network-unavailable and spec.unschedulable →
//     node.kubernetes.io/unschedulable (NoSchedule);
//   - taint eviction: pods that do not tolerate a NoExecute taint of their
//     node are deleted, at once or after the smallest tolerationSeconds
//     counted from the taint's timeAdded (300s from the admission defaults),
//     after getting the DisruptionTarget condition (DeletionByTaintManager);
//   - pod GC: pods bound to a Node that no longer exists are marked Failed
//     with DisruptionTarget (DeletionByPodGC) and force-deleted.
//
// Time is measured with this server's clock from when it last saw the
// Lease change, never by comparing clocks of different machines.
package nodelifecycle
