// Package etcdstore implements datastore.Store on an external etcd v3
// cluster, for `orch server --datastore-endpoint`.
//
// The mapping is direct: the store revision is etcd's revision, a KV's
// CreateRevision and ModRevision are etcd's create_revision and
// mod_revision, compare-and-swap writes are etcd transactions comparing
// mod_revision, a multi-op datastore Txn is one etcd Txn (all or nothing),
// ListAt is a range read at an old revision and Watch is an etcd watch with
// previous values. Old revisions are kept until the periodic compaction
// (kube-apiserver's algorithm: every interval, compact to the revision seen
// one interval before); reads and watches behind it fail with
// datastore.ErrCompacted, which the API turns into 410 Gone.
//
// Election runs a lease-based leader election on the same etcd so that, of
// several orch servers sharing it, exactly one runs the control loops.
package etcdstore
