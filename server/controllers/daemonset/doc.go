// Package daemonset is orch's DaemonSet controller, after
// kube-controller-manager's: one pod per eligible node. A node is eligible
// when it matches the template's nodeName, nodeSelector and required node
// affinity and has no NoSchedule/NoExecute taint the pod does not tolerate
// (the default DaemonSet tolerations included: not-ready and unreachable
// NoExecute, disk/memory/pid-pressure and unschedulable NoSchedule,
// network-unavailable for hostNetwork pods). A pod stays on a node that
// became ineligible only through a NoSchedule taint.
//
// Pods are created unbound with the required node affinity
// `matchFields metadata.name In [<node>]`, so the scheduler loop binds
// them, and carry controller-revision-hash and pod-template-generation
// labels. Each template is kept as a ControllerRevision (package history)
// so `kubectl rollout status/history/undo ds` work. RollingUpdate replaces
// old pods within maxUnavailable, or surges new ones within maxSurge and
// deletes the old pod once the new one is available; OnDelete only
// replaces pods the user deleted. Pods of removed nodes are deleted; failed
// pods are deleted (and recreated). Status and Events
// (SuccessfulCreate/SuccessfulDelete/FailedDaemonPod) follow upstream.
//
// Creations and deletions are remembered per DaemonSet until the cache
// shows them (expectations), so a sync never acts on a stale cache.
package daemonset
