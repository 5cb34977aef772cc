package datastore

import (
	"context"
	"errors"
	"net"
	"sync/atomic"
	"testing"
	"time"
)

func TestWhileLeaderEndsOnNewLeader(t *testing.T) {
	w := newLeaderWatch()
	var cur atomic.Value
	cur.Store("a:1")
	current := func() string { return cur.Load().(string) }
	started := make(chan struct{})
	errc := make(chan error, 1)
	go func() {
		errc <- w.whileLeader(context.Background(), current, "a:1", func(ctx context.Context, _ string) error {
			close(started)
			<-ctx.Done() // a partitioned leader: no answer until cancelled
			return ctx.Err()
		})
	}()
	<-started
	cur.Store("") // an election: no leader known yet, the call goes on
	w.fire()
	select {
	case err := <-errc:
		t.Fatalf("ended while no other leader was known: %v", err)
	case <-time.After(50 * time.Millisecond):
	}
	cur.Store("b:1")
	w.fire()
	select {
	case err := <-errc:
		if !errors.Is(err, ErrLeaderChanged) {
			t.Fatalf("err = %v, want ErrLeaderChanged", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the call did not end when another leader was known")
	}
}

func TestWhileLeaderPassesResults(t *testing.T) {
	w := newLeaderWatch()
	boom := errors.New("boom")
	err := w.whileLeader(context.Background(), func() string { return "a:1" }, "a:1",
		func(context.Context, string) error { return boom })
	if !errors.Is(err, boom) || errors.Is(err, ErrLeaderChanged) {
		t.Fatalf("err = %v, want boom only", err)
	}
}

// A forwarded call whose context ends stops waiting for an answer that
// does not come.
func TestForwardCallHonoursContext(t *testing.T) {
	client, server := net.Pipe()
	defer server.Close()
	go func() { // read the request, never answer
		buf := make([]byte, 4096)
		for {
			if _, err := server.Read(buf); err != nil {
				return
			}
		}
	}()
	f := newForwarder(func(string, time.Duration) (net.Conn, error) { return client, nil })
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	go func() { time.Sleep(50 * time.Millisecond); cancel() }()
	done := make(chan error, 1)
	go func() { _, err := f.call(ctx, "x", fwdRequest{Op: fwdReadIndex}); done <- err }()
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("call answered without an answer")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the call kept waiting after its context ended")
	}
}
