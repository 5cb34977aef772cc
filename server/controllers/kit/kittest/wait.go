package kittest

import (
	"testing"
	"time"
)

// poll is how often Eventually and Until look again.
const poll = 20 * time.Millisecond

// Eventually polls cond until it holds. After timeout it fails the test,
// saying what it waited for and the last note cond gave (the state seen).
func Eventually(t testing.TB, timeout time.Duration, what string, cond func() (ok bool, note string)) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		ok, note := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s; last: %s", what, note)
		}
		time.Sleep(poll)
	}
}

// Until polls cond until it holds, failing the test after 20s.
func Until(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(poll)
	}
}
