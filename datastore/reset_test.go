package datastore_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/orch/orch/datastore"
)

// ackLog records the revision of every acknowledged create.
type ackLog struct {
	mu   sync.Mutex
	revs map[string]int64
}

func (a *ackLog) add(key string, rev int64) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.revs[key] = rev
}

func (a *ackLog) copy() map[string]int64 {
	a.mu.Lock()
	defer a.mu.Unlock()
	c := make(map[string]int64, len(a.revs))
	for k, v := range a.revs {
		c[k] = v
	}
	return c
}

// TestSnapshotUnderLoadRestoresAcknowledgedWrites takes a snapshot while 16
// writers create keys, restores it in place, and checks the restored store
// holds exactly the writes with revisions up to the snapshot's (so every
// write acknowledged before the snapshot began, and nothing after its
// revision), and that revisions continue from the snapshot's.
func TestSnapshotUnderLoadRestoresAcknowledgedWrites(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	cfg := datastore.NewTestConfig(t, dir)
	cfg.BindAddr = freeAddr(t)
	s := datastore.OpenTest(t, cfg)
	acks := &ackLog{revs: map[string]int64{}}
	var stop atomic.Bool
	var n atomic.Int64
	var wg sync.WaitGroup
	for w := 0; w < 16; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; !stop.Load(); i++ {
				key := fmt.Sprintf("/load/%02d/%06d", w, i)
				rev, err := s.Create(ctx, key, []byte(key))
				if err != nil {
					t.Errorf("create %s: %v", key, err)
					return
				}
				acks.add(key, rev)
				n.Add(1)
			}
		}()
	}
	eventually(t, "300 writes", func() bool { return n.Load() >= 300 })
	before := acks.copy()
	file := filepath.Join(t.TempDir(), "snap")
	meta, err := s.SaveSnapshotFile(ctx, file)
	mustOK(t, err)
	target := n.Load() + 300
	eventually(t, "300 more writes", func() bool { return n.Load() >= target })
	stop.Store(true)
	wg.Wait()
	mustOK(t, s.Close())
	all := acks.copy()
	t.Logf("%d writes acknowledged before the snapshot at revision %d, %d in all", len(before), meta.Revision, len(all))

	res, err := datastore.RestoreSnapshot(datastore.ResetOptions{Dir: dir, NodeID: cfg.NodeID, Addr: cfg.BindAddr}, file)
	mustOK(t, err)
	if res.Revision != meta.Revision || res.Backup == "" {
		t.Fatalf("restore result %+v, snapshot revision %d", res, meta.Revision)
	}
	r := datastore.OpenTest(t, cfg)
	checkRestored(t, r, meta.Revision, before, all)
}

// checkRestored checks r holds exactly the acknowledged keys with
// revisions up to rev (a superset of before) and accepts new writes at
// rev+1.
func checkRestored(t *testing.T, r *datastore.RaftStore, rev int64, before, all map[string]int64) {
	t.Helper()
	ctx := context.Background()
	if r.Revision() != rev {
		t.Fatalf("restored revision %d, snapshot revision %d", r.Revision(), rev)
	}
	for k, krev := range before {
		if krev > rev {
			t.Fatalf("%s acknowledged before the snapshot at revision %d, after its revision %d", k, krev, rev)
		}
	}
	for k, krev := range all {
		_, err := r.Get(ctx, k)
		if present := err == nil; present != (krev <= rev) {
			t.Fatalf("%s written at revision %d: present=%v (%v) in the store restored at %d", k, krev, present, err, rev)
		}
	}
	if cnt, _ := r.Count(ctx, "/load/"); cnt != rev {
		t.Fatalf("%d keys in the restored store at revision %d", cnt, rev)
	}
	got, err := r.Create(ctx, "/after/restore", nil)
	if err != nil || got != rev+1 {
		t.Fatalf("create after restore = %d, %v; want revision %d", got, err, rev+1)
	}
}

// TestResetClusterFromThreeVoters stops a three-voter cluster, resets one
// survivor's directory to a one-member cluster and checks it elects itself
// with all the data and takes writes; restarting it keeps working.
func TestResetClusterFromThreeVoters(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	s1 := datastore.OpenTest(t, clusterConfig(t, "n1", true))
	c2 := clusterConfig(t, "n2", false)
	s2 := openFollower(t, c2)
	s3 := openFollower(t, clusterConfig(t, "n3", false))
	mustOK(t, s1.AddVoter(ctx, s2.ID(), s2.Addr()))
	mustOK(t, s1.AddVoter(ctx, s3.ID(), s3.Addr()))
	for i := 0; i < 200; i++ {
		_, err := s1.Create(ctx, fmt.Sprintf("/r/%03d", i), []byte("v"))
		mustOK(t, err)
	}
	eventually(t, "a follower snapshot", func() bool { return countSnapshots(t, c2.Dir) > 0 })
	for i := 0; i < 10; i++ { // entries past the snapshot, replayed by the reset
		_, err := s1.Create(ctx, fmt.Sprintf("/r/late-%d", i), []byte("v"))
		mustOK(t, err)
	}
	eventually(t, "follower catch-up", func() bool { return s2.Revision() == s1.Revision() })
	want, rev := dump(t, s1), s1.Revision()
	for _, s := range []*datastore.RaftStore{s1, s2, s3} {
		mustOK(t, s.Close())
	}

	c2.BindAddr = freeAddr(t)
	res, err := datastore.ResetCluster(datastore.ResetOptions{Dir: c2.Dir, NodeID: "n2", Addr: c2.BindAddr})
	mustOK(t, err)
	if res.Revision != rev || res.Index == 0 {
		t.Fatalf("reset result %+v, want revision %d", res, rev)
	}
	r := datastore.OpenTest(t, c2)
	if got := dump(t, r); got != want {
		t.Fatal("state after reset differs from the cluster's")
	}
	got, err := r.Create(ctx, "/after/reset", nil)
	if err != nil || got != rev+1 {
		t.Fatalf("create after reset = %d, %v; want revision %d", got, err, rev+1)
	}
	want = dump(t, r)
	mustOK(t, r.Close())
	r = datastore.OpenTest(t, c2) // a restart of the reset server
	if got := dump(t, r); got != want {
		t.Fatal("state after restarting the reset server differs")
	}
	if got, err := r.Create(ctx, "/after/restart", nil); err != nil || got != rev+2 {
		t.Fatalf("create after restart = %d, %v; want revision %d", got, err, rev+2)
	}
}

// TestResetRefusesARunningStore checks restore and reset leave an open
// store alone.
func TestResetRefusesARunningStore(t *testing.T) {
	ctx := context.Background()
	cfg := datastore.NewTestConfig(t, t.TempDir())
	s := datastore.OpenTest(t, cfg)
	_, err := s.Create(ctx, "/k", nil)
	mustOK(t, err)
	file := filepath.Join(t.TempDir(), "snap")
	_, err = s.SaveSnapshotFile(ctx, file)
	mustOK(t, err)
	opts := datastore.ResetOptions{Dir: cfg.Dir, NodeID: cfg.NodeID, Addr: s.Addr()}
	if _, err := datastore.RestoreSnapshot(opts, file); !errors.Is(err, datastore.ErrStoreInUse) {
		t.Fatalf("RestoreSnapshot on an open store: %v, want ErrStoreInUse", err)
	}
	if _, err := datastore.ResetCluster(opts); !errors.Is(err, datastore.ErrStoreInUse) {
		t.Fatalf("ResetCluster on an open store: %v, want ErrStoreInUse", err)
	}
	if rev, err := s.Create(ctx, "/k2", nil); err != nil || rev != 2 {
		t.Fatalf("store after the refused reset: %d, %v", rev, err)
	}
	if _, err := os.Stat(filepath.Join(cfg.Dir, "state.db.restore")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("restore left its temporary file: %v", err)
	}
}

// freeAddr returns a loopback address with a port free right now.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	mustOK(t, err)
	defer ln.Close()
	return ln.Addr().String()
}
