// Package ha starts three real `orch server` processes on loopback as one
// highly available cluster (the first bootstraps, the others join with
// --server and the token) and checks what a client sees: every server
// serves reads and writes, a quorum read on one server sees a write
// acknowledged on another, watches on a follower deliver the leader's
// writes in order, the leader's SIGKILL costs no acknowledged write, a
// restarted server catches up, and deleting a server's Node removes it from
// the Raft cluster.
//
// Run: go test ./test/ha/
package ha
