package apiserver

import (
	"context"
	"net/http"
	"strconv"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// handleGet serves GET of one object (and of its status subresource).
func (s *Server) handleGet(w http.ResponseWriter, r *http.Request, rc *reqCtx) {
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
	s.writeJSON(w, r, http.StatusOK, out)
}

// listItems reads the matching objects of one page. With a limit it reads
// the store in chunks until the page is full; the continue token resumes
// after the last key read. The list revision is the first page's revision.
func (s *Server) listItems(ctx context.Context, rc *reqCtx, o *listOptions) ([]runtime.Object, metav1.ListMeta, error) {
	prefix := rc.res.Prefix(rc.ns)
	start, rev, offset := prefix, int64(0), int64(0)
	if o.cont != nil {
		start, rev, offset = prefix+o.cont.Start, o.cont.RV, o.cont.Offset
	}
	items := []runtime.Object{}
	var lm metav1.ListMeta
	for {
		page, err := s.store.List(ctx, prefix, start, chunkSize(o))
		if err != nil {
			return nil, lm, err
		}
		if rev == 0 {
			rev = page.Revision
		}
		for i := range page.KVs {
			kv := &page.KVs[i]
			obj, err := decodeStored(rc.res, kv)
			if err != nil {
				return nil, lm, err
			}
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
