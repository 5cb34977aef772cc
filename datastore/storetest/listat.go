package storetest

import (
	"fmt"
	"slices"
	"testing"

	"github.com/orch/orch/datastore"
)

// testListAtSnapshot checks that continue pages read with ListAt see the
// state of the first page's revision, whatever was written in between.
func testListAtSnapshot(t *testing.T, s datastore.Store) {
	ctx := ctxT(t)
	var want []string
	for i := 0; i < 10; i++ {
		k := fmt.Sprintf("/p/k%02d", i)
		must(s.Create(ctx, k, []byte("v"+k)))
		want = append(want, k)
	}
	must(s.Create(ctx, "/q/outside", []byte("x")))
	first := must(s.List(ctx, "/p/", "", 3))
	rev := first.Revision
	// Writes after the first page: inserts before and after the cut, an
	// update, deletes on both sides of the cut.
	must(s.Create(ctx, "/p/k00a", []byte("new")))
	must(s.Create(ctx, "/p/k05a", []byte("new")))
	must(s.Update(ctx, "/p/k04", []byte("changed"), 0))
	_, _, err := s.Delete(ctx, "/p/k08", 0)
	wantErr(t, err, nil)
	_, _, err = s.Delete(ctx, "/p/k01", 0)
	wantErr(t, err, nil)

	got := kvKeys(first.KVs)
	next := first.KVs[len(first.KVs)-1].Key + "\x00"
	for more := first.More; more; {
		page := must(s.ListAt(ctx, "/p/", next, 3, rev))
		if page.Revision != rev {
			t.Fatalf("ListAt revision = %d, want %d", page.Revision, rev)
		}
		for _, kv := range page.KVs {
			if kv.Key == "/p/k04" && string(kv.Value) != "v/p/k04" {
				t.Fatalf("ListAt shows %q = %q, want the value at revision %d", kv.Key, kv.Value, rev)
			}
		}
		got = append(got, kvKeys(page.KVs)...)
		more = page.More
		if len(page.KVs) > 0 {
			next = page.KVs[len(page.KVs)-1].Key + "\x00"
		}
	}
	if !slices.Equal(got, want) {
		t.Fatalf("paged list at revision %d = %v, want %v", rev, got, want)
	}
	cur := must(s.ListAt(ctx, "/p/", "", 0, s.Revision()))
	if len(cur.KVs) != 10 || cur.KVs[1].Key != "/p/k00a" {
		t.Fatalf("ListAt current revision = %v", kvKeys(cur.KVs))
	}
}

// testListAtCompacted checks that a revision older than the kept history
// is refused with ErrCompacted.
func testListAtCompacted(t *testing.T, s datastore.Store) {
	ctx := ctxT(t)
	must(s.Create(ctx, "/z/a", []byte("a")))
	rev := s.Revision()
	for i := 0; i < HistorySize+4; i++ {
		must(s.Create(ctx, fmt.Sprintf("/z/b%02d", i), []byte("b")))
	}
	_, err := s.ListAt(ctx, "/z/", "", 2, rev)
	wantErr(t, err, datastore.ErrCompacted)
}

// testListAtFuture checks that a revision newer than the store's reads the
// current state instead of failing or waiting.
func testListAtFuture(t *testing.T, s datastore.Store) {
	ctx := ctxT(t)
	must(s.Create(ctx, "/f/a", []byte("a")))
	r := must(s.Create(ctx, "/f/b", []byte("b")))
	res := must(s.ListAt(ctx, "/f/", "", 0, r+100))
	if got := kvKeys(res.KVs); !slices.Equal(got, []string{"/f/a", "/f/b"}) {
		t.Fatalf("ListAt a future revision = %v", got)
	}
}
