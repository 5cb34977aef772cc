// Package snapshots manages user-facing datastore snapshots (k3s's
// `etcd-snapshot` feature) for orch's Raft+bbolt store: snapshot files in a
// directory (named <name>-<node>-<unixtime>, listed, deleted and pruned by
// retention), the authenticated endpoint through which `orch etcd-snapshot
// save` asks the running server for one, and the cron schedule of automatic
// snapshots.
//
// The file format (a bbolt image of the FSM with a checksummed metadata
// trailer) and the offline restore and cluster reset live in package
// datastore.
package snapshots
