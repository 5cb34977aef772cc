// Package testutil starts real `orch server` processes for end-to-end tests
// and finds the tools those tests drive (a real kubectl).
//
// The orch binary is built once per test binary from the repository root
// (or taken from ORCH_BINARY), each server gets its own free loopback ports,
// data directory and kubeconfig, and everything is killed and removed in
// t.Cleanup even when the test fails. Test packages call Main from TestMain
// so the per-binary build directory is removed at exit.
package testutil
