// Package datastore is orch's replacement for etcd: a key/value store with
// etcd-like keys (/registry/<resource>/<namespace>/<name>), one global revision
// that becomes the Kubernetes resourceVersion, per-key create/mod revisions,
// compare-and-swap writes, multi-op transactions and watch with a bounded
// event history.
//
// The real implementation (RaftStore, opened with Open) replicates typed
// commands through hashicorp/raft (raft-boltdb/v2 log and stable store, file
// snapshots, mutual-TLS TCP transport) into an FSM whose state is a bbolt
// file. Its directory holds raft.db (log and stable store), snapshots/ and
// state.db (keys plus the revision and last applied raft index, committed
// together once per batch of log entries; without fsync while the raft
// snapshots and log can rebuild it, see syncmode.go). Writes are accepted on the leader
// only (ErrNotLeader elsewhere); reads and watches are served from the local
// state on every server. MemStore is the in-memory twin used by unit tests of
// the layers above; package storetest is the contract suite all pass,
// including etcdstore.Store, the same interface on an external etcd.
//
// SaveSnapshot exports a user-facing snapshot file (the state file's bbolt
// image from one read transaction plus a metadata trailer with its revision
// and sha256). RestoreSnapshot and ResetCluster work offline on a closed
// store's directory: the first replaces the state with a verified snapshot
// and starts a new single-voter raft log, the second turns the existing
// state into a one-member cluster with raft's RecoverCluster. See
// docs/snapshots.md.
//
// Event values handed to watchers are shared between watchers and must be
// treated as read-only.
package datastore
