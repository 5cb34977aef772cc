package etcdstore_test

import (
	"testing"
	"time"

	"go.uber.org/zap/zaptest"

	"github.com/orch/orch/datastore/etcdstore"
	"github.com/orch/orch/datastore/etcdstore/etcdtest"
)

// waitLeader waits until exactly one of elections leads and returns it.
func waitLeader(t *testing.T, elections ...*etcdstore.Election) *etcdstore.Election {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		var leaders []*etcdstore.Election
		for _, e := range elections {
			if e.IsLeader() {
				leaders = append(leaders, e)
			}
		}
		if len(leaders) > 1 {
			t.Fatalf("%d leaders at once", len(leaders))
		}
		if len(leaders) == 1 {
			return leaders[0]
		}
		if time.Now().After(deadline) {
			t.Fatal("no leader within 30s")
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestElection checks that of two candidates exactly one leads, that
// LeaderCh reports it, and that closing the leader hands over at once.
func TestElection(t *testing.T) {
	e := etcdtest.Start(t)
	s1 := open(t, e, "", nil)
	s2 := open(t, e, "", nil)
	log := zaptest.NewLogger(t)
	e1 := etcdstore.NewElection(s1.Client(), "/orch/leader", "one", 2*time.Second, log.Named("one"))
	t.Cleanup(func() { _ = e1.Close() })
	e2 := etcdstore.NewElection(s2.Client(), "/orch/leader", "two", 2*time.Second, log.Named("two"))
	t.Cleanup(func() { _ = e2.Close() })
	first := waitLeader(t, e1, e2)
	other := e2
	if first == e2 {
		other = e1
	}
	ch := other.LeaderCh()
	if <-ch {
		t.Fatal("the follower's LeaderCh says leader")
	}
	time.Sleep(500 * time.Millisecond)
	if other.IsLeader() {
		t.Fatal("two leaders")
	}
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case l := <-ch:
		if !l {
			t.Fatal("LeaderCh delivered false after the leader resigned")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no hand-over within 10s of the leader closing")
	}
	if first.IsLeader() || !other.IsLeader() {
		t.Fatal("leadership not handed over")
	}
	if _, ok := <-first.LeaderCh(); ok {
		t.Fatal("LeaderCh of a closed election is open")
	}
}

// TestElectionLostWithEtcd checks that a leader cut off from etcd reports
// leadership lost (its lease can no longer be kept alive), so it stops its
// control loops before another server could win.
func TestElectionLostWithEtcd(t *testing.T) {
	e := etcdtest.Start(t)
	s := open(t, e, "", nil)
	el := etcdstore.NewElection(s.Client(), "/orch/leader", "one", 2*time.Second, zaptest.NewLogger(t))
	t.Cleanup(func() { _ = el.Close() })
	waitLeader(t, el)
	ch := el.LeaderCh()
	<-ch // the current state
	e.Kill()
	select {
	case l := <-ch:
		if l {
			t.Fatal("LeaderCh says leader after etcd died")
		}
	case <-time.After(30 * time.Second):
		t.Fatal("still leader 30s after etcd died")
	}
	if el.IsLeader() {
		t.Fatal("IsLeader after etcd died")
	}
	// Closing must not hang on the unreachable etcd (shutdown of a server
	// whose etcd is gone).
	closed := make(chan error, 1)
	go func() { closed <- el.Close() }()
	select {
	case <-closed:
	case <-time.After(60 * time.Second):
		t.Fatal("Close hangs while etcd is down")
	}
}
