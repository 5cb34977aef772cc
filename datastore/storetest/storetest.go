package storetest

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"testing"
	"time"

	"github.com/orch/orch/datastore"
)

// HistorySize is the watch history (in events) newStore must configure; the
// compaction test relies on it.
const HistorySize = 16

// Run runs the contract suite. newStore returns a fresh, empty, writable store
// with HistorySize events of watch history; Run closes it when a test ends.
func Run(t *testing.T, newStore func(t *testing.T) datastore.Store) {
	tests := []struct {
		name string
		fn   func(t *testing.T, s datastore.Store)
	}{
		{"CreateGet", testCreateGet},
		{"Update", testUpdate},
		{"Delete", testDelete},
		{"TxnAtomic", testTxnAtomic},
		{"TxnSameKey", testTxnSameKey},
		{"ListPaging", testListPaging},
		{"ListAtSnapshot", testListAtSnapshot},
		{"ListAtCompacted", testListAtCompacted},
		{"ListAtFuture", testListAtFuture},
		{"Count", testCount},
		{"WatchFromNow", testWatchFromNow},
		{"WatchTxnMixed", testWatchTxnMixed},
		{"WatchResume", testWatchResume},
		{"WatchCompacted", testWatchCompacted},
		{"WatchCancel", testWatchCancel},
		{"WatchSlowClosed", testWatchSlowClosed},
		{"ListThenWatch", testListThenWatch},
		{"ConcurrentCreates", testConcurrentCreates},
		{"Closed", testClosed},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := newStore(t)
			t.Cleanup(func() { _ = s.Close() })
			runCase(t, s, tc.fn)
		})
	}
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// mustError carries a failed must through a panic to the recover in Run.
type mustError struct{ err error }

// must returns v, or aborts the current test when err is not nil.
func must[T any](v T, err error) T {
	if err != nil {
		panic(mustError{err})
	}
	return v
}

// runCase runs fn, turning a failed must into a test failure with a stack.
func runCase(t *testing.T, s datastore.Store, fn func(t *testing.T, s datastore.Store)) {
	defer func() {
		if r := recover(); r != nil {
			if m, ok := r.(mustError); ok {
				t.Fatalf("unexpected error: %v\n%s", m.err, debug.Stack())
			}
			panic(r)
		}
	}()
	fn(t, s)
}

func wantErr(t *testing.T, err, want error) {
	t.Helper()
	if !errors.Is(err, want) {
		t.Fatalf("error = %v, want %v", err, want)
	}
}

func wantRev(t *testing.T, s datastore.Store, want int64) {
	t.Helper()
	if got := s.Revision(); got != want {
		t.Fatalf("Revision() = %d, want %d", got, want)
	}
}

func testCreateGet(t *testing.T, s datastore.Store) {
	ctx := ctxT(t)
	base := s.Revision()
	r1 := must(s.Create(ctx, "/a/1", []byte("v1")))
	if r1 != base+1 {
		t.Fatalf("create rev = %d, want %d", r1, base+1)
	}
	_, err := s.Create(ctx, "/a/1", []byte("again"))
	wantErr(t, err, datastore.ErrKeyExists)
	wantRev(t, s, r1)
	kv := must(s.Get(ctx, "/a/1"))
	if kv.Key != "/a/1" || string(kv.Value) != "v1" || kv.CreateRevision != r1 || kv.ModRevision != r1 {
		t.Fatalf("Get = %+v", kv)
	}
	kv.Value[0] = 'X' // callers own returned buffers
	if kv2 := must(s.Get(ctx, "/a/1")); string(kv2.Value) != "v1" {
		t.Fatalf("stored value changed through returned slice: %q", kv2.Value)
	}
	_, err = s.Get(ctx, "/a/missing")
	wantErr(t, err, datastore.ErrNotFound)
	_, err = s.Create(ctx, "", []byte("x"))
	if err == nil {
		t.Fatal("create with empty key succeeded")
	}
	wantRev(t, s, r1)
}

func testUpdate(t *testing.T, s datastore.Store) {
	ctx := ctxT(t)
	r1 := must(s.Create(ctx, "/u/1", []byte("a")))
	r2 := must(s.Update(ctx, "/u/1", []byte("b"), r1))
	if r2 != r1+1 {
		t.Fatalf("update rev = %d, want %d", r2, r1+1)
	}
	_, err := s.Update(ctx, "/u/1", []byte("c"), r1)
	wantErr(t, err, datastore.ErrConflict)
	_, err = s.Update(ctx, "/u/none", []byte("c"), 0)
	wantErr(t, err, datastore.ErrNotFound)
	wantRev(t, s, r2)
	r3 := must(s.Update(ctx, "/u/1", []byte("d"), 0))
	kv := must(s.Get(ctx, "/u/1"))
	if string(kv.Value) != "d" || kv.CreateRevision != r1 || kv.ModRevision != r3 {
		t.Fatalf("after update Get = %+v (r1=%d r3=%d)", kv, r1, r3)
	}
}

func testDelete(t *testing.T, s datastore.Store) {
	ctx := ctxT(t)
	r1 := must(s.Create(ctx, "/d/1", []byte("a")))
	r2 := must(s.Update(ctx, "/d/1", []byte("b"), 0))
	_, _, err := s.Delete(ctx, "/d/1", r1)
	wantErr(t, err, datastore.ErrConflict)
	_, _, err = s.Delete(ctx, "/d/none", 0)
	wantErr(t, err, datastore.ErrNotFound)
	wantRev(t, s, r2)
	r3, prev, err := s.Delete(ctx, "/d/1", r2)
	if err != nil || r3 != r2+1 {
		t.Fatalf("Delete = %d, %v; want %d", r3, err, r2+1)
	}
	if prev == nil || string(prev.Value) != "b" || prev.CreateRevision != r1 || prev.ModRevision != r2 {
		t.Fatalf("Delete prev = %+v", prev)
	}
	_, err = s.Get(ctx, "/d/1")
	wantErr(t, err, datastore.ErrNotFound)
	r4 := must(s.Create(ctx, "/d/1", []byte("new")))
	if kv := must(s.Get(ctx, "/d/1")); kv.CreateRevision != r4 {
		t.Fatalf("recreated key CreateRevision = %d, want %d", kv.CreateRevision, r4)
	}
}

func testTxnAtomic(t *testing.T, s datastore.Store) {
	ctx := ctxT(t)
	r1 := must(s.Create(ctx, "/t/a", []byte("a")))
	must(s.Create(ctx, "/t/b", []byte("b")))
	r := must(s.Txn(ctx, []datastore.Op{
		{Type: datastore.OpCreate, Key: "/t/c", Value: []byte("c")},
		{Type: datastore.OpUpdate, Key: "/t/a", Value: []byte("a2"), ExpectedRev: r1},
		{Type: datastore.OpDelete, Key: "/t/b"},
	}))
	wantRev(t, s, r)
	for key, want := range map[string]string{"/t/a": "a2", "/t/c": "c"} {
		kv := must(s.Get(ctx, key))
		if string(kv.Value) != want || kv.ModRevision != r {
			t.Fatalf("%s = %+v, want value %q at rev %d", key, kv, want, r)
		}
	}
	_, err := s.Get(ctx, "/t/b")
	wantErr(t, err, datastore.ErrNotFound)
	failing := []struct {
		ops  []datastore.Op
		want error
	}{
		{[]datastore.Op{{Type: datastore.OpCreate, Key: "/t/new", Value: []byte("x")},
			{Type: datastore.OpCreate, Key: "/t/a", Value: []byte("x")}}, datastore.ErrKeyExists},
		{[]datastore.Op{{Type: datastore.OpCreate, Key: "/t/new", Value: []byte("x")},
			{Type: datastore.OpUpdate, Key: "/t/a", Value: []byte("x"), ExpectedRev: r1}}, datastore.ErrConflict},
		{[]datastore.Op{{Type: datastore.OpDelete, Key: "/t/c"},
			{Type: datastore.OpDelete, Key: "/t/b"}}, datastore.ErrNotFound},
	}
	for i, f := range failing {
		_, err := s.Txn(ctx, f.ops)
		if !errors.Is(err, f.want) {
			t.Fatalf("failing txn %d: error %v, want %v", i, err, f.want)
		}
	}
	wantRev(t, s, r)
	_, err = s.Get(ctx, "/t/new")
	wantErr(t, err, datastore.ErrNotFound)
	must(s.Get(ctx, "/t/c"))
	if _, err := s.Txn(ctx, nil); err == nil {
		t.Fatal("empty txn succeeded")
	}
	wantRev(t, s, r)
}

func testTxnSameKey(t *testing.T, s datastore.Store) {
	ctx := ctxT(t)
	r := must(s.Txn(ctx, []datastore.Op{
		{Type: datastore.OpCreate, Key: "/s/k", Value: []byte("1")},
		{Type: datastore.OpUpdate, Key: "/s/k", Value: []byte("2")},
	}))
	kv := must(s.Get(ctx, "/s/k"))
	if string(kv.Value) != "2" || kv.CreateRevision != r || kv.ModRevision != r {
		t.Fatalf("Get = %+v, want value 2 at %d", kv, r)
	}
	// Deleting and re-creating a key in one txn gives it a new create
	// revision; a store that cannot express that (etcd) refuses the whole
	// txn with ErrUnsupported and changes nothing.
	r2, err := s.Txn(ctx, []datastore.Op{
		{Type: datastore.OpDelete, Key: "/s/k", ExpectedRev: r},
		{Type: datastore.OpCreate, Key: "/s/k", Value: []byte("3")},
	})
	if errors.Is(err, datastore.ErrUnsupported) {
		if kv := must(s.Get(ctx, "/s/k")); kv.ModRevision != r || string(kv.Value) != "2" {
			t.Fatalf("refused txn changed the key: %+v", kv)
		}
		wantRev(t, s, r)
		return
	}
	wantErr(t, err, nil)
	if kv := must(s.Get(ctx, "/s/k")); kv.CreateRevision != r2 || string(kv.Value) != "3" {
		t.Fatalf("Get = %+v, want recreated at %d", kv, r2)
	}
}

func testListPaging(t *testing.T, s datastore.Store) {
	ctx := ctxT(t)
	keys := []string{"/l/a/1", "/l/a/2", "/l/a/3", "/l/a/4", "/l/a/5"}
	for _, k := range keys {
		must(s.Create(ctx, k, []byte(k)))
	}
	must(s.Create(ctx, "/l/ab/1", []byte("x"))) // sibling prefix
	must(s.Create(ctx, "/l/", []byte("x")))
	all := must(s.List(ctx, "/l/a/", "", 0))
	if got := kvKeys(all.KVs); fmt.Sprint(got) != fmt.Sprint(keys) || all.More {
		t.Fatalf("List all = %v more=%v", got, all.More)
	}
	if all.Revision != s.Revision() {
		t.Fatalf("List revision %d, store %d", all.Revision, s.Revision())
	}
	var got []string
	start := ""
	for pages := 0; ; pages++ {
		if pages > 5 {
			t.Fatal("paging does not end")
		}
		page := must(s.List(ctx, "/l/a/", start, 2))
		if len(page.KVs) > 2 {
			t.Fatalf("page has %d keys, limit 2", len(page.KVs))
		}
		got = append(got, kvKeys(page.KVs)...)
		if !page.More {
			break
		}
		start = page.KVs[len(page.KVs)-1].Key + "\x00"
	}
	if fmt.Sprint(got) != fmt.Sprint(keys) {
		t.Fatalf("paged keys = %v, want %v", got, keys)
	}
	exact := must(s.List(ctx, "/l/a/", "", 5))
	if exact.More || len(exact.KVs) != 5 {
		t.Fatalf("limit == count: %d keys more=%v", len(exact.KVs), exact.More)
	}
	mid := must(s.List(ctx, "/l/a/", "/l/a/3", 0))
	if fmt.Sprint(kvKeys(mid.KVs)) != fmt.Sprint(keys[2:]) {
		t.Fatalf("List from /l/a/3 = %v", kvKeys(mid.KVs))
	}
	none := must(s.List(ctx, "/nothing/", "", 0))
	if len(none.KVs) != 0 || none.More {
		t.Fatalf("List of empty prefix = %+v", none)
	}
	kv := all.KVs[0]
	if string(kv.Value) != "/l/a/1" || kv.CreateRevision == 0 || kv.ModRevision != kv.CreateRevision {
		t.Fatalf("listed kv = %+v", kv)
	}
}

func kvKeys(kvs []datastore.KV) []string {
	out := make([]string, len(kvs))
	for i, kv := range kvs {
		out[i] = kv.Key
	}
	return out
}

func testCount(t *testing.T, s datastore.Store) {
	ctx := ctxT(t)
	for i := 0; i < 7; i++ {
		must(s.Create(ctx, fmt.Sprintf("/c/x/%d", i), nil))
	}
	must(s.Create(ctx, "/c/xy", nil))
	for prefix, want := range map[string]int64{"/c/x/": 7, "/c/": 8, "/none/": 0, "": 8} {
		if n := must(s.Count(ctx, prefix)); n != want {
			t.Fatalf("Count(%q) = %d, want %d", prefix, n, want)
		}
	}
}
