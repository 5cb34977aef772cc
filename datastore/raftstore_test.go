package datastore_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/orch/orch/datastore"
	"github.com/orch/orch/datastore/storetest"
)

func TestRaftStoreContract(t *testing.T) {
	storetest.Run(t, func(t *testing.T) datastore.Store {
		cfg := datastore.NewTestConfig(t, t.TempDir())
		cfg.HistorySize = storetest.HistorySize
		return datastore.OpenTest(t, cfg)
	})
}

func TestRaftStoreSingleNodeStart(t *testing.T) {
	start := time.Now()
	s := datastore.OpenTest(t, datastore.NewTestConfig(t, t.TempDir()))
	t.Logf("leader after %v", time.Since(start)) // informational only
	if !s.IsLeader() || s.LeaderAddr() == "" {
		t.Fatalf("IsLeader=%v LeaderAddr=%q", s.IsLeader(), s.LeaderAddr())
	}
	// true comes once the new leader has applied what was committed before
	// (raft's barrier), which may be just after IsLeader: an early false is
	// fine, never reaching true is not.
	ch, deadline := s.LeaderCh(), time.After(5*time.Second)
	for {
		select {
		case v := <-ch:
			if v {
				return
			}
		case <-deadline:
			t.Fatal("LeaderCh never reported true on the leader")
		}
	}
}

func TestRaftStoreRestart(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	cfg := datastore.NewTestConfig(t, dir)
	s := datastore.OpenTest(t, cfg)
	for i := 0; i < 50; i++ {
		if _, err := s.Create(ctx, fmt.Sprintf("/r/%02d", i), []byte{byte(i)}); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, err := s.Delete(ctx, "/r/00", 0); err != nil {
		t.Fatal(err)
	}
	before := dump(t, s)
	rev := s.Revision()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s2 := datastore.OpenTest(t, cfg)
	if s2.Revision() != rev {
		t.Fatalf("revision after restart %d, want %d", s2.Revision(), rev)
	}
	if after := dump(t, s2); after != before {
		t.Fatalf("state differs after restart:\n%s\nvs\n%s", before, after)
	}
	r, err := s2.Create(ctx, "/r/new", nil)
	if err != nil || r != rev+1 {
		t.Fatalf("create after restart = %d, %v; want %d", r, err, rev+1)
	}
}

func TestRaftStoreSnapshotRestart(t *testing.T) {
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cfg := datastore.NewTestConfig(t, dir)
	cfg.SnapshotThreshold, cfg.TrailingLogs, cfg.SnapshotInterval = 64, 16, 50*time.Millisecond
	s := datastore.OpenTest(t, cfg)
	parallel(t, 8, 300, func(i int) error { // snapshots are taken while these run
		_, err := s.Create(ctx, fmt.Sprintf("/s/%03d", i), []byte("v0"))
		return err
	})
	parallel(t, 8, 1700, func(i int) error {
		_, err := s.Update(ctx, fmt.Sprintf("/s/%03d", i%300), []byte(fmt.Sprint("v", i)), 0)
		return err
	})
	before, rev := dump(t, s), s.Revision()
	mustOK(t, s.Close())
	if n := countSnapshots(t, dir); n == 0 {
		t.Fatal("no snapshot was taken")
	}
	s2 := datastore.OpenTest(t, cfg)
	if s2.Revision() != rev || dump(t, s2) != before {
		t.Fatalf("after restart revision %d (want %d) or keys differ", s2.Revision(), rev)
	}
	mustOK(t, s2.Close())
	// a lost state file is rebuilt from the newest snapshot plus the log
	mustOK(t, os.Remove(filepath.Join(dir, "state.db")))
	s3 := datastore.OpenTest(t, cfg)
	if s3.Revision() != rev || dump(t, s3) != before {
		t.Fatalf("after losing state.db revision %d (want %d) or keys differ", s3.Revision(), rev)
	}
}

func mustOK(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// dump renders every key with its revisions.
func dump(t *testing.T, s datastore.Store) string {
	t.Helper()
	res, err := s.List(context.Background(), "", "", 0)
	mustOK(t, err)
	out := fmt.Sprintf("rev=%d\n", res.Revision)
	for _, kv := range res.KVs {
		out += fmt.Sprintf("%s c=%d m=%d %q\n", kv.Key, kv.CreateRevision, kv.ModRevision, kv.Value)
	}
	return out
}

func countSnapshots(t *testing.T, dir string) int {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join(dir, "snapshots"))
	mustOK(t, err)
	return len(entries)
}

// parallel runs fn(0..n-1) on the given number of goroutines.
func parallel(t *testing.T, workers, n int, fn func(i int) error) {
	t.Helper()
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int(next.Add(1)) - 1; i < n; i = int(next.Add(1)) - 1 {
				if err := fn(i); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}
