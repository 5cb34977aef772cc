package apiserver

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/orch/orch/datastore"
	"github.com/orch/orch/server/registry"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// handleGet serves GET of one object (and of its status subresource).
func (s *Server) handleGet(w http.ResponseWriter, r *http.Request, rc *reqCtx) {
	if err := s.syncRead(r.Context(), r.URL.Query().Get("resourceVersion")); err != nil {
		s.writeError(w, r, err)
		return
	}
	obj, _, err := s.getStored(r.Context(), rc.res, rc.ns, rc.name)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	s.writeObject(w, r, rc, http.StatusOK, obj)
}

// handleList serves GET of a collection with selectors and pagination.
func (s *Server) handleList(w http.ResponseWriter, r *http.Request, rc *reqCtx) {
	opts, err := s.parseListOptions(rc)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	if opts.cont == nil {
		if err := s.syncRead(r.Context(), opts.resourceVersion); err != nil {
			s.writeError(w, r, err)
			return
		}
	}
	items, lm, err := s.listItems(r.Context(), rc, opts)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	out, err := s.transformList(rc, items, lm)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	s.writeNegotiated(w, r, rc, http.StatusOK, out)
}

// listItems reads the matching objects of one page. With a limit it reads
// the store in chunks until the page is full; the continue token resumes
// after the last key read. Every chunk and continue page is read at the
// first page's revision (Store.ListAt), so a paginated list is one snapshot
// as with etcd; once that revision has left the history the continue token
// is expired (410) and the error carries a token that continues at the
// current state, as kube-apiserver does.
func (s *Server) listItems(ctx context.Context, rc *reqCtx, o *listOptions) ([]runtime.Object, metav1.ListMeta, error) {
	prefix := rc.res.Prefix(rc.ns)
	start, offset := prefix, int64(0)
	rev, err := exactListRevision(o)
	if err != nil {
		return nil, metav1.ListMeta{}, err
	}
	if o.cont != nil {
		start, rev, offset = prefix+o.cont.Start, max(o.cont.RV, 0), o.cont.Offset
	}
	items := []runtime.Object{}
	var lm metav1.ListMeta
	for {
		page, err := s.readChunk(ctx, prefix, start, chunkSize(o), rev)
		if err != nil {
			return nil, lm, listReadError(err, o, prefix, start, offset)
		}
		if rev == 0 {
			rev = page.Revision
		}
		objs, err := decodePage(rc.res, page.KVs)
		if err != nil {
			return nil, lm, err
		}
		for i, obj := range objs {
			kv := &page.KVs[i]
			if o.matches(rc, obj) {
				items = append(items, obj)
			}
			start = kv.Key + "\x00"
			if o.limit > 0 && int64(len(items)) == o.limit && (i < len(page.KVs)-1 || page.More) {
				lm.Continue = encodeContinue(continueToken{RV: rev, Start: start[len(prefix):], Offset: offset + int64(len(items))})
				s.setRemaining(ctx, &lm, o, prefix, offset+int64(len(items)))
				lm.ResourceVersion = strconv.FormatInt(rev, 10)
				return items, lm, nil
			}
		}
		if !page.More || o.limit == 0 {
			break
		}
	}
	lm.ResourceVersion = strconv.FormatInt(rev, 10)
	return items, lm, nil
}

// decodePage decodes a page of stored values (converted in one call).
func decodePage(res *registry.Resource, kvs []datastore.KV) ([]runtime.Object, error) {
	ptrs := make([]*datastore.KV, len(kvs))
	for i := range kvs {
		ptrs[i] = &kvs[i]
	}
	return decodeStoredAll(res, ptrs)
}

// readChunk reads keys at revision rev, or at the current revision when rev is 0.
func (s *Server) readChunk(ctx context.Context, prefix, start string, limit, rev int64) (datastore.ListResult, error) {
	if rev == 0 {
		return s.store.List(ctx, prefix, start, limit)
	}
	return s.store.ListAt(ctx, prefix, start, limit, rev)
}

// exactListRevision is the revision a list must be read at when the client
// asked for resourceVersionMatch=Exact (0 = the current revision).
func exactListRevision(o *listOptions) (int64, error) {
	if o.rvMatch != "Exact" {
		return 0, nil
	}
	return parseRV(o.resourceVersion)
}

// listReadError turns a read at a revision that has left the history into
// kube-apiserver's answers: 410 Expired for a continue token (with a token
// that continues at the current state), 410 Gone for an exact resourceVersion.
func listReadError(err error, o *listOptions, prefix, start string, offset int64) error {
	if !errors.Is(err, datastore.ErrCompacted) {
		return err
	}
	if o.cont == nil {
		return apierrors.NewResourceExpired(fmt.Sprintf("too old resource version: %s", o.resourceVersion))
	}
	st := apierrors.NewResourceExpired("The provided continue parameter is too old to display a consistent list result. " +
		"You can start a new list without the continue parameter, or use the continue token in this response to " +
		"retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - " +
		"objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.")
	st.ErrStatus.ListMeta.Continue = encodeContinue(continueToken{RV: -1, Start: start[len(prefix):], Offset: offset})
	return st
}

// setRemaining sets remainingItemCount for unfiltered limited lists.
func (s *Server) setRemaining(ctx context.Context, lm *metav1.ListMeta, o *listOptions, prefix string, seen int64) {
	if !o.label.Empty() || !o.field.Empty() {
		return
	}
	total, err := s.store.Count(ctx, prefix)
	if err != nil || total-seen <= 0 {
		return
	}
	n := total - seen
	lm.RemainingItemCount = &n
}

// chunkSize is how many keys one store read takes: the limit, but at least
// 256 when selectors may drop most of them.
func chunkSize(o *listOptions) int64 {
	if o.limit > 0 && o.limit < 256 && (!o.label.Empty() || !o.field.Empty()) {
		return 256
	}
	return o.limit
}
