package storetest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/orch/orch/datastore"
)

// next receives one event or fails after a timeout.
func next(t *testing.T, ch <-chan datastore.Event) datastore.Event {
	t.Helper()
	select {
	case ev, ok := <-ch:
		if !ok {
			t.Fatal("watch channel closed unexpectedly")
		}
		return ev
	case <-time.After(10 * time.Second):
		t.Fatal("no watch event within 10s")
	}
	return datastore.Event{}
}

// quiet asserts no event arrives for a short while.
func quiet(t *testing.T, ch <-chan datastore.Event) {
	t.Helper()
	select {
	case ev, ok := <-ch:
		t.Fatalf("unexpected event %+v (open=%v)", ev, ok)
	case <-time.After(100 * time.Millisecond):
	}
}

// waitClosed drains ch until it is closed, returning how many events it held.
func waitClosed(t *testing.T, ch <-chan datastore.Event) int {
	t.Helper()
	n := 0
	timeout := time.After(20 * time.Second)
	for {
		select {
		case _, ok := <-ch:
			if !ok {
				return n
			}
			n++
		case <-timeout:
			t.Fatal("watch channel not closed within 20s")
		}
	}
}

func testWatchFromNow(t *testing.T, s datastore.Store) {
	ctx := ctxT(t)
	r0 := must(s.Create(ctx, "/w/old", []byte("o")))
	ch := must(s.Watch(ctx, "/w/", 0))
	r1 := must(s.Create(ctx, "/w/a", []byte("1")))
	must(s.Create(ctx, "/other/a", []byte("x")))
	r2 := must(s.Update(ctx, "/w/a", []byte("2"), r1))
	r3, _, err := s.Delete(ctx, "/w/a", 0)
	if err != nil {
		t.Fatal(err)
	}
	ev := next(t, ch)
	if ev.Type != datastore.EventCreate || ev.Revision != r1 || ev.KV.Key != "/w/a" ||
		string(ev.KV.Value) != "1" || ev.KV.CreateRevision != r1 || ev.PrevKV != nil {
		t.Fatalf("create event = %+v", ev)
	}
	ev = next(t, ch)
	if ev.Type != datastore.EventUpdate || ev.Revision != r2 || string(ev.KV.Value) != "2" ||
		ev.KV.ModRevision != r2 || ev.KV.CreateRevision != r1 ||
		ev.PrevKV == nil || string(ev.PrevKV.Value) != "1" || ev.PrevKV.ModRevision != r1 {
		t.Fatalf("update event = %+v prev=%+v", ev, ev.PrevKV)
	}
	ev = next(t, ch)
	if ev.Type != datastore.EventDelete || ev.Revision != r3 || string(ev.KV.Value) != "2" ||
		ev.KV.ModRevision != r3 || ev.PrevKV == nil || ev.PrevKV.ModRevision != r2 {
		t.Fatalf("delete event = %+v prev=%+v", ev, ev.PrevKV)
	}
	_ = r0
	quiet(t, ch)
	// a txn delivers all its events at one revision
	rt := must(s.Txn(ctx, []datastore.Op{
		{Type: datastore.OpCreate, Key: "/w/t1"}, {Type: datastore.OpCreate, Key: "/w/t2"}}))
	for _, key := range []string{"/w/t1", "/w/t2"} {
		if ev := next(t, ch); ev.KV.Key != key || ev.Revision != rt {
			t.Fatalf("txn event = %+v, want %s at %d", ev, key, rt)
		}
	}
}

// testWatchTxnMixed checks the events of one txn that creates, updates and
// deletes keys: all at the txn's revision, each with the right type, value
// and previous value.
func testWatchTxnMixed(t *testing.T, s datastore.Store) {
	ctx := ctxT(t)
	ru := must(s.Create(ctx, "/m/upd", []byte("u1")))
	rd := must(s.Create(ctx, "/m/del", []byte("d1")))
	ch := must(s.Watch(ctx, "/m/", 0))
	rt := must(s.Txn(ctx, []datastore.Op{
		{Type: datastore.OpCreate, Key: "/m/new", Value: []byte("n1")},
		{Type: datastore.OpUpdate, Key: "/m/upd", Value: []byte("u2"), ExpectedRev: ru},
		{Type: datastore.OpDelete, Key: "/m/del", ExpectedRev: rd},
	}))
	got := map[string]datastore.Event{}
	for range 3 {
		ev := next(t, ch)
		if ev.Revision != rt || ev.KV.ModRevision != rt {
			t.Fatalf("txn event at %d (kv mod %d), want %d: %+v", ev.Revision, ev.KV.ModRevision, rt, ev)
		}
		got[ev.KV.Key] = ev
	}
	if ev := got["/m/new"]; ev.Type != datastore.EventCreate || string(ev.KV.Value) != "n1" ||
		ev.KV.CreateRevision != rt || ev.PrevKV != nil {
		t.Fatalf("create event = %+v", ev)
	}
	if ev := got["/m/upd"]; ev.Type != datastore.EventUpdate || string(ev.KV.Value) != "u2" ||
		ev.KV.CreateRevision != ru || ev.PrevKV == nil || string(ev.PrevKV.Value) != "u1" || ev.PrevKV.ModRevision != ru {
		t.Fatalf("update event = %+v prev=%+v", ev, ev.PrevKV)
	}
	if ev := got["/m/del"]; ev.Type != datastore.EventDelete || string(ev.KV.Value) != "d1" ||
		ev.KV.CreateRevision != rd || ev.PrevKV == nil || ev.PrevKV.ModRevision != rd {
		t.Fatalf("delete event = %+v prev=%+v", ev, ev.PrevKV)
	}
	quiet(t, ch)
}

func testWatchResume(t *testing.T, s datastore.Store) {
	ctx := ctxT(t)
	var revs []int64
	for i := 0; i < 5; i++ {
		revs = append(revs, must(s.Create(ctx, fmt.Sprintf("/r/%d", i), nil)))
	}
	ch := must(s.Watch(ctx, "/r/", revs[1]))
	for i := 2; i < 5; i++ {
		if ev := next(t, ch); ev.Revision != revs[i] || ev.KV.Key != fmt.Sprintf("/r/%d", i) {
			t.Fatalf("resumed event %d = %+v", i, ev)
		}
	}
	quiet(t, ch)
	r := must(s.Create(ctx, "/r/live", nil))
	if ev := next(t, ch); ev.Revision != r {
		t.Fatalf("live event after replay = %+v", ev)
	}
	cur := must(s.Watch(ctx, "/r/", s.Revision()))
	quiet(t, cur)
}

func testWatchCompacted(t *testing.T, s datastore.Store) {
	ctx := ctxT(t)
	first := must(s.Create(ctx, "/k/first", nil))
	for i := 0; i < 3*HistorySize; i++ {
		must(s.Create(ctx, fmt.Sprintf("/k/%d", i), nil))
	}
	_, err := s.Watch(ctx, "/k/", first)
	wantErr(t, err, datastore.ErrCompacted)
	last := s.Revision()
	ch := must(s.Watch(ctx, "/k/", last-HistorySize/2))
	for i := int64(1); i <= HistorySize/2; i++ {
		if ev := next(t, ch); ev.Revision != last-HistorySize/2+i {
			t.Fatalf("event %d rev %d", i, ev.Revision)
		}
	}
}

func testWatchCancel(t *testing.T, s datastore.Store) {
	ctx, cancel := context.WithCancel(ctxT(t))
	ch := must(s.Watch(ctx, "/x/", 0))
	cancel()
	waitClosed(t, ch)
	ch2 := must(s.Watch(ctxT(t), "/x/", 0))
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	waitClosed(t, ch2)
}

func testWatchSlowClosed(t *testing.T, s datastore.Store) {
	ctx := ctxT(t)
	ch := must(s.Watch(ctx, "/slow/", 0))
	const writers, per = 16, 200 // more than any sane watch buffer
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < per; i++ {
				if _, err := s.Create(ctx, fmt.Sprintf("/slow/%d/%d", w, i), nil); err != nil {
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
	if n := waitClosed(t, ch); n >= writers*per {
		t.Fatalf("slow watcher got all %d events, expected it to be closed", n)
	}
}

func testListThenWatch(t *testing.T, s datastore.Store) {
	ctx := ctxT(t)
	const n = 300
	done := make(chan error, 1)
	go func() {
		for i := 0; i < n; i++ {
			if _, err := s.Create(ctx, fmt.Sprintf("/lw/%03d", i), nil); err != nil {
				done <- err
				return
			}
		}
		done <- nil
	}()
	time.Sleep(5 * time.Millisecond)
	list := must(s.List(ctx, "/lw/", "", 0))
	ch := must(s.Watch(ctx, "/lw/", list.Revision))
	seen := map[string]int{}
	for _, kv := range list.KVs {
		seen[kv.Key]++
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	for len(seen) < n {
		ev := next(t, ch)
		if ev.Revision <= list.Revision {
			t.Fatalf("event at %d <= list revision %d", ev.Revision, list.Revision)
		}
		seen[ev.KV.Key]++
	}
	for k, c := range seen {
		if c != 1 {
			t.Fatalf("key %s seen %d times", k, c)
		}
	}
	quiet(t, ch)
}

func testConcurrentCreates(t *testing.T, s datastore.Store) {
	ctx := ctxT(t)
	base := s.Revision()
	const writers, per = 8, 25
	var mu sync.Mutex
	revs := map[int64]bool{}
	var wg sync.WaitGroup
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < per; i++ {
				r, err := s.Create(ctx, fmt.Sprintf("/cc/%d/%d", w, i), nil)
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				revs[r] = true
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if len(revs) != writers*per {
		t.Fatalf("%d distinct revisions for %d creates", len(revs), writers*per)
	}
	wantRev(t, s, base+writers*per)
}

func testClosed(t *testing.T, s datastore.Store) {
	ctx := ctxT(t)
	must(s.Create(ctx, "/z", nil))
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	_, err := s.Create(ctx, "/z2", nil)
	wantErr(t, err, datastore.ErrClosed)
	_, err = s.Get(ctx, "/z")
	wantErr(t, err, datastore.ErrClosed)
	_, err = s.Watch(ctx, "/", 0)
	wantErr(t, err, datastore.ErrClosed)
	if err := s.Close(); err != nil && !errors.Is(err, datastore.ErrClosed) {
		t.Fatalf("second Close: %v", err)
	}
}
