// Package reliability is the fault-injection proof of issue 11: several
// `orch server`s in network namespaces (scripts/testcluster.sh --servers S),
// a client-go load of creates, CAS updates, deletes and gets on ConfigMaps
// against every server, watches on every server, and faults injected while
// the load runs (kill -9 of the leader or a follower, partitions, a slow
// fsync on the leader, restart of all servers).
//
// The history of every operation (call and return time, outcome: ok, a
// definite failure such as 409/404, or unknown when it timed out) is checked
// for linearizability with porcupine against a per-key register with CAS
// semantics keyed by resourceVersion (model.go); each watch stream is checked
// for gaps, duplicates and order against the acknowledged writes
// (watchcheck.go); after each round every acknowledged write must be visible
// through a quorum read on every live server.
//
// The checker is plain code with unit tests that always run. The cluster
// tests need root and run only with ORCH_RELIABILITY=1 (`make reliability`):
//
//	ORCH_RELIABILITY=1 ORCH_RELIABILITY_SERVERS=3 ORCH_RELIABILITY_ROUNDS=10 \
//	    go test -count=1 -timeout 0 -v ./test/reliability/
//
// The test prints a markdown table for docs/reliability.md.
package reliability
