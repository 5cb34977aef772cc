// Package schedloop is the scheduler's server loop: it watches Pods and
// Nodes through shared informers, queues pending pods (no spec.nodeName,
// schedulerName "" or "default-scheduler", not terminating, not finished)
// in a rate-limited workqueue, builds a scheduler.Snapshot from the
// informer caches plus the pods it bound that the cache does not show yet
// (the assume cache), calls scheduler.Schedule and binds through the
// pods/binding subresource. A pod that fits nowhere gets PodScheduled=False
// (reason Unschedulable, kube-scheduler's message) and a FailedScheduling
// event; it is retried, with the queue's back-off, when a Node is added or
// updated or a Pod is deleted, never by polling. Only the Raft leader runs it.
package schedloop
