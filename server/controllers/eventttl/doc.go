// Package eventttl deletes Events older than a time to live (1 h by
// default), as kube-apiserver's --event-ttl does with etcd leases. orch's
// datastore has no leases, so a leader-only loop sweeps Events on a timer
// (a time-based expiry, not state polling) and deletes the expired ones
// through the API with a resourceVersion precondition, so an Event that was
// just updated (its count bumped) is kept.
package eventttl
