// Package kittest runs leader-only controllers in tests the way the server
// does: over a real in-process API server (apiservertest, memory
// datastore), one kit.Context whose shared informers start once every
// controller is built, each controller's Run in its own goroutine, and a
// cleanup that stops them, waits for them and shuts the Context down (Run).
// It also holds what those tests share: polling until a condition holds
// (Eventually, Until) and a conflict-safe read-modify-write (Update).
package kittest
