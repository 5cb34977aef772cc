// Package crash kills a real `orch server` with SIGKILL in the middle of a
// concurrent write load, restarts it on the same data dir and checks that
// every acknowledged write survived whole and that the server takes writes
// again.
//
// Run: go test ./test/crash/ (ORCH_CRASH_ROUNDS=n for more rounds).
package crash
