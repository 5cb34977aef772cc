// Package integration drives a real `orch server` process with client-go:
// CRUD, list/watch, optimistic concurrency, patches, selectors, pagination,
// subresources, error handling on bad input, authentication and restarts.
//
// Run: go test ./test/integration/ (ORCH_BINARY=path to test a prebuilt
// binary). Most tests are subtests of TestAPI and share one server; tests
// that restart a server or change its flags start their own.
package integration
