// Package statefulset is orch's StatefulSet controller, after
// kube-controller-manager's. Pods are named "<set>-<ordinal>", get
// hostname <pod> and subdomain spec.serviceName, and the labels
// statefulset.kubernetes.io/pod-name, apps.kubernetes.io/pod-index and
// controller-revision-hash (the name of their ControllerRevision, see
// package history). Each volumeClaimTemplate gives every pod its own
// PersistentVolumeClaim "<claim>-<set>-<ordinal>", created before the pod
// and kept when the pod goes (persistentVolumeClaimRetentionPolicy
// Retain/Retain); with whenDeleted: Delete the claims are owned by the set,
// with whenScaled: Delete a condemned pod's claims are owned by that pod,
// so the garbage collector removes them after their owner.
//
// OrderedReady creates pods one at a time in ordinal order, each Running
// and Ready (and available for minReadySeconds) before the next, and
// removes surplus pods one at a time from the highest ordinal, only while
// all others are healthy; Parallel creates and deletes without waiting.
// RollingUpdate replaces pods at ordinals >= partition from the highest
// down, one at a time, each after the previous is healthy again; pods
// below the partition are (re)created from the current revision. OnDelete
// replaces only pods the user deleted. Status carries currentRevision and
// updateRevision as upstream's, and Events use upstream's messages
// ("create Pod web-0 in StatefulSet web successful").
package statefulset
