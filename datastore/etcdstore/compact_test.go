package etcdstore_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/orch/orch/datastore"
	"github.com/orch/orch/datastore/etcdstore"
	"github.com/orch/orch/datastore/etcdstore/etcdtest"
)

// TestCompaction checks that the periodic compaction really compacts etcd:
// afterwards reads and watches at an old revision fail with ErrCompacted
// (410 Gone in the API), while current reads and watches keep working. Two
// stores share the compaction clock.
func TestCompaction(t *testing.T) {
	e := etcdtest.Start(t)
	short := func(c *etcdstore.Config) { c.CompactInterval = 200 * time.Millisecond }
	s := open(t, e, "", short)
	open(t, e, "", short) // a second server on the same etcd
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	old, err := s.Create(ctx, "/registry/a", []byte("1"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Update(ctx, "/registry/a", []byte("2"), 0); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		_, err := s.ListAt(ctx, "/registry/", "", 0, old)
		if errors.Is(err, datastore.ErrCompacted) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if time.Now().After(deadline) {
			t.Fatalf("revision %d not compacted within 20s", old)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if _, err := s.Watch(ctx, "/registry/", old); !errors.Is(err, datastore.ErrCompacted) {
		t.Fatalf("watch from compacted revision: %v, want ErrCompacted", err)
	}
	kv, err := s.Get(ctx, "/registry/a")
	if err != nil || string(kv.Value) != "2" {
		t.Fatalf("Get after compaction = %+v, %v", kv, err)
	}
	ch, err := s.Watch(ctx, "/registry/", s.Revision())
	if err != nil {
		t.Fatal(err)
	}
	rev, err := s.Update(ctx, "/registry/a", []byte("3"), kv.ModRevision)
	if err != nil {
		t.Fatal(err)
	}
	select {
	case ev := <-ch:
		if ev.Type != datastore.EventUpdate || ev.Revision != rev || ev.PrevKV == nil || string(ev.PrevKV.Value) != "2" {
			t.Fatalf("event after compaction = %+v", ev)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no event after compaction")
	}
}
