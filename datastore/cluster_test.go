package datastore_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/orch/orch/datastore"
)

// eventually polls cond until it holds or fails the test after 30s.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func clusterConfig(t *testing.T, id string, bootstrap bool) datastore.Config {
	cfg := datastore.NewTestConfig(t, t.TempDir())
	cfg.NodeID, cfg.Bootstrap = id, bootstrap
	cfg.SnapshotThreshold, cfg.TrailingLogs, cfg.SnapshotInterval = 64, 16, 50*time.Millisecond
	return cfg
}

func openFollower(t *testing.T, cfg datastore.Config) *datastore.RaftStore {
	t.Helper()
	s, err := datastore.Open(context.Background(), cfg)
	mustOK(t, err)
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// TestRaftStoreCluster joins two servers to a leader whose log is already
// truncated (so they install a snapshot over mutual TLS), checks replication,
// follower write rejection, and fail-over after the leader stops.
func TestRaftStoreCluster(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c1 := clusterConfig(t, "n1", true)
	s1 := datastore.OpenTest(t, c1)
	for i := 0; i < 300; i++ {
		_, err := s1.Create(ctx, fmt.Sprintf("/c/%03d", i), []byte("v"))
		mustOK(t, err)
	}
	eventually(t, "a leader snapshot", func() bool { return countSnapshots(t, c1.Dir) > 0 })
	s2 := openFollower(t, clusterConfig(t, "n2", false))
	s3 := openFollower(t, clusterConfig(t, "n3", false))
	mustOK(t, s1.AddVoter(ctx, s2.ID(), s2.Addr()))
	mustOK(t, s1.AddVoter(ctx, s3.ID(), s3.Addr()))
	watch, err := s1.Watch(ctx, "/c/", 0)
	mustOK(t, err)
	for i := 300; i < 400; i++ {
		_, err := s1.Create(ctx, fmt.Sprintf("/c/%03d", i), []byte("v"))
		mustOK(t, err)
	}
	want := dump(t, s1)
	for _, f := range []*datastore.RaftStore{s2, s3} {
		eventually(t, "follower catch-up", func() bool { return f.Revision() == s1.Revision() })
		if got := dump(t, f); got != want {
			t.Fatalf("follower %s state differs", f.ID())
		}
		if f.IsLeader() || f.LeaderAddr() != s1.Addr() {
			t.Fatalf("follower %s: IsLeader=%v LeaderAddr=%q", f.ID(), f.IsLeader(), f.LeaderAddr())
		}
	}
	for _, f := range []*datastore.RaftStore{s2, s3} {
		if _, err := f.Create(ctx, "/c/x-"+f.ID(), nil); err != nil {
			t.Fatalf("write forwarded from follower %s: %v", f.ID(), err)
		}
		if _, err := f.Create(ctx, "/c/x-"+f.ID(), nil); !errors.Is(err, datastore.ErrKeyExists) {
			t.Fatalf("forwarded duplicate create error = %v, want ErrKeyExists", err)
		}
		mustOK(t, f.Sync(ctx))
		if _, err := f.Get(ctx, "/c/x-"+f.ID()); err != nil {
			t.Fatalf("read after Sync on %s misses its own forwarded write: %v", f.ID(), err)
		}
	}
	if ev := <-watch; ev.KV.Key != "/c/300" {
		t.Fatalf("leader watch got %+v", ev)
	}
	failover(t, ctx, s1, s2, s3)
}

// failover stops the leader and checks a follower takes over.
func failover(t *testing.T, ctx context.Context, old, a, b *datastore.RaftStore) {
	rev := old.Revision()
	mustOK(t, old.Close())
	var leader *datastore.RaftStore
	eventually(t, "a new leader", func() bool {
		for _, s := range []*datastore.RaftStore{a, b} {
			if s.IsLeader() {
				leader = s
				return true
			}
		}
		return false
	})
	mustOK(t, leader.WaitLeader(ctx))
	ch := leader.LeaderCh()
	for lead := false; !lead; {
		select {
		case lead = <-ch:
		case <-time.After(30 * time.Second):
			t.Fatal("LeaderCh of the new leader never sent true")
		}
	}
	r, err := leader.Create(ctx, "/c/after-failover", nil)
	if err != nil || r != rev+1 {
		t.Fatalf("create on new leader = %d, %v; want revision %d", r, err, rev+1)
	}
	mustOK(t, leader.RemoveServer(ctx, old.ID()))
}

// TestRaftStoreJoinCluster joins servers through a follower (the request is
// forwarded to the leader): each is added as a non-voter, catches up and is
// promoted; a quorum read on a follower sees a write acknowledged on another
// follower at once.
func TestRaftStoreJoinCluster(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	s1 := datastore.OpenTest(t, clusterConfig(t, "j1", true))
	for i := 0; i < 50; i++ {
		_, err := s1.Create(ctx, fmt.Sprintf("/j/%03d", i), []byte("v"))
		mustOK(t, err)
	}
	s2 := openFollower(t, clusterConfig(t, "j2", false))
	mustOK(t, s2.JoinCluster(ctx, []string{"127.0.0.1:1", s1.Addr()}))
	s3 := openFollower(t, clusterConfig(t, "j3", false))
	mustOK(t, s3.JoinCluster(ctx, []string{s2.Addr()}))
	ms, err := s1.Members()
	mustOK(t, err)
	if len(ms) != 3 || !ms[0].Voter || !ms[1].Voter || !ms[2].Voter {
		t.Fatalf("members = %+v, want three voters", ms)
	}
	for i := 0; i < 20; i++ {
		key := fmt.Sprintf("/j/q%02d", i)
		_, err := s2.Create(ctx, key, []byte("v"))
		mustOK(t, err)
		mustOK(t, s3.Sync(ctx))
		if _, err := s3.Get(ctx, key); err != nil {
			t.Fatalf("quorum read on s3 after a write acknowledged on s2: %v", err)
		}
	}
	mustOK(t, s3.RemoveMember(ctx, "j2"))
	ms, err = s1.Members()
	mustOK(t, err)
	if len(ms) != 2 {
		t.Fatalf("after removal members = %+v", ms)
	}
	mustOK(t, s3.JoinCluster(ctx, nil)) // already a voter: nothing to do
}

// TestSyncAfterRestart: a restarted single server's log ends on the new
// term's no-op, which raft never hands the FSM; a quorum read must not wait
// for it forever.
func TestSyncAfterRestart(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cfg := clusterConfig(t, "r1", true)
	s := datastore.OpenTest(t, cfg)
	_, err := s.Create(ctx, "/r/a", []byte("v"))
	mustOK(t, err)
	mustOK(t, s.Close())
	s2 := openFollower(t, cfg)
	mustOK(t, s2.WaitLeader(ctx))
	sctx, scancel := context.WithTimeout(ctx, 10*time.Second)
	defer scancel()
	mustOK(t, s2.Sync(sctx))
	if _, err := s2.Get(ctx, "/r/a"); err != nil {
		t.Fatal(err)
	}
}
