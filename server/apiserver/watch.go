package apiserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/orch/orch/datastore"
)

// bookmarkInterval is how often a watch with allowWatchBookmarks gets a BOOKMARK.
const bookmarkInterval = time.Minute

// watchStream writes one watch response: metav1.WatchEvent JSON objects, one
// per line, or length-delimited protobuf frames when the client negotiated
// protobuf; flushed after each.
type watchStream struct {
	s         *Server
	w         http.ResponseWriter
	rc        *reqCtx
	opts      *listOptions
	enc       *json.Encoder
	frames    *protoFrames
	sentTable bool
	lastRev   int64
	flushFn   func()
}

// handleWatch serves ?watch=1 and the legacy /watch/ paths.
func (s *Server) handleWatch(w http.ResponseWriter, r *http.Request, rc *reqCtx) {
	opts, err := s.parseListOptions(rc)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), watchTimeout(opts))
	defer cancel()
	initial, startRev, err := s.watchStart(ctx, rc, opts)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	ch, err := s.store.Watch(ctx, rc.res.Prefix(rc.ns), startRev)
	if err != nil && !errors.Is(err, datastore.ErrCompacted) {
		s.writeError(w, r, err)
		return
	}
	ws := s.newWatchStream(w, rc, opts, startRev)
	if err != nil { // compacted: upstream answers 200 and one ERROR event
		st := s.toStatus(apierrors.NewResourceExpired(fmt.Sprintf("too old resource version: %d (%d)", startRev, s.store.Revision())))
		_ = ws.send(watch.Error, st)
		return
	}
	ws.flush()
	if ws.sendInitial(initial) != nil {
		return
	}
	ws.loop(ctx, ch)
}

func watchTimeout(o *listOptions) time.Duration {
	if o.timeoutSeconds > 0 {
		return time.Duration(o.timeoutSeconds) * time.Second
	}
	return 30*time.Minute + time.Duration(rand.Int64N(int64(30*time.Minute)))
}

// watchStart lists the initial state when the watch starts with synthetic
// ADDED events (resourceVersion "" or "0", or sendInitialEvents=true), and
// picks the revision the live events start after.
func (s *Server) watchStart(ctx context.Context, rc *reqCtx, o *listOptions) ([]runtime.Object, int64, error) {
	fromRev, err := parseRV(o.resourceVersion)
	if err != nil {
		return nil, 0, err
	}
	initial := fromRev == 0
	if o.sendInitialEvents != nil {
		initial = *o.sendInitialEvents
		if initial && o.rvMatch != "NotOlderThan" {
			return nil, 0, badRequestf("sendInitialEvents=true requires resourceVersionMatch=NotOlderThan")
		}
	}
	if !initial {
		if fromRev == 0 {
			fromRev = s.store.Revision()
		}
		return nil, fromRev, nil
	}
	page, err := s.store.List(ctx, rc.res.Prefix(rc.ns), "", 0)
	if err != nil {
		return nil, 0, err
	}
	all, err := decodePage(rc.res, page.KVs)
	if err != nil {
		return nil, 0, err
	}
	objs := make([]runtime.Object, 0, len(all))
	for _, obj := range all {
		if o.matches(rc, obj) {
			objs = append(objs, obj)
		}
	}
	return objs, page.Revision, nil
}

func (s *Server) newWatchStream(w http.ResponseWriter, rc *reqCtx, o *listOptions, rev int64) *watchStream {
	ws := &watchStream{s: s, w: w, rc: rc, opts: o, enc: json.NewEncoder(w), lastRev: rev, flushFn: func() {}}
	ctype := "application/json"
	if rc.out.proto {
		ctype = runtime.ContentTypeProtobuf + ";stream=watch"
		ws.frames = &protoFrames{enc: s.dec.protobuf, w: w}
	}
	w.Header().Set("Content-Type", ctype)
	w.Header().Set("Cache-Control", "no-cache, private")
	w.WriteHeader(http.StatusOK)
	if f, ok := w.(http.Flusher); ok {
		ws.flushFn = f.Flush
	}
	return ws
}

func (ws *watchStream) flush() { ws.flushFn() }

// sendInitial sends the synthetic ADDED events and, for a WatchList
// (sendInitialEvents=true), the BOOKMARK that ends them.
func (ws *watchStream) sendInitial(objs []runtime.Object) error {
	for _, obj := range objs {
		if err := ws.send(watch.Added, ws.transform(obj)); err != nil {
			return err
		}
	}
	if ws.opts.sendInitialEvents != nil && *ws.opts.sendInitialEvents && ws.opts.bookmarks {
		return ws.sendBookmark(true)
	}
	return nil
}

// loop streams live events until the client leaves, the timeout hits or the
// store closes the channel.
func (ws *watchStream) loop(ctx context.Context, ch <-chan datastore.Event) {
	var tick <-chan time.Time
	if ws.opts.bookmarks {
		t := time.NewTicker(bookmarkInterval)
		defer t.Stop()
		tick = t.C
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick:
			if ws.sendBookmark(false) != nil {
				return
			}
		case ev, ok := <-ch:
			if !ok {
				return
			}
			if ws.handleEvent(ev) != nil {
				return
			}
		}
	}
}

func (ws *watchStream) handleEvent(ev datastore.Event) error {
	ws.lastRev = ev.Revision
	typ, obj, err := ws.convert(ev)
	if err != nil {
		ws.s.log.Warn("watch: decode event failed; ending watch")
		return err
	}
	if obj == nil {
		return nil
	}
	return ws.send(typ, ws.transform(obj))
}

// convert maps a store event to a watch event, applying the selectors: an
// update that leaves the selection is DELETED (the old object at the event's
// revision), one that enters it is ADDED. nil = not for this watcher.
func (ws *watchStream) convert(ev datastore.Event) (watch.EventType, runtime.Object, error) {
	res := ws.rc.res
	cur, err := decodeStored(res, &ev.KV)
	if err != nil {
		return "", nil, err
	}
	curOK := ws.opts.matches(ws.rc, cur)
	switch ev.Type {
	case datastore.EventCreate:
		return watch.Added, keepIf(cur, curOK), nil
	case datastore.EventDelete:
		return watch.Deleted, keepIf(cur, curOK), nil
	}
	if ev.PrevKV == nil || (ws.opts.label.Empty() && ws.opts.field.Empty()) {
		return watch.Modified, keepIf(cur, curOK), nil
	}
	prev, err := decodeStored(res, ev.PrevKV)
	if err != nil {
		return "", nil, err
	}
	prevOK := ws.opts.matches(ws.rc, prev)
	switch {
	case curOK && prevOK:
		return watch.Modified, cur, nil
	case curOK:
		return watch.Added, cur, nil
	case prevOK:
		if err := setResourceVersion(prev, ev.Revision); err != nil {
			return "", nil, err
		}
		return watch.Deleted, prev, nil
	}
	return "", nil, nil
}

func keepIf(obj runtime.Object, ok bool) runtime.Object {
	if ok {
		return obj
	}
	return nil
}

// transform gives obj the negotiated form; a Table carries its column
// definitions in the first event only, as upstream.
func (ws *watchStream) transform(obj runtime.Object) interface{} {
	switch ws.rc.out.kind {
	case outTable:
		t := ws.s.toTable(ws.rc, []runtime.Object{obj}, metav1.ListMeta{ResourceVersion: objectMeta(obj).GetResourceVersion()}, !ws.sentTable)
		ws.sentTable = true
		return t
	case outPartial:
		return toPartial(obj, ws.rc.out.version)
	}
	return obj
}

// sendBookmark sends a BOOKMARK at the last revision this watch has seen.
func (ws *watchStream) sendBookmark(initialEnd bool) error {
	obj := ws.rc.res.New()
	setTypeMeta(ws.rc.res, obj)
	m := objectMeta(obj)
	_ = setResourceVersion(obj, ws.lastRev)
	if initialEnd {
		m.SetAnnotations(map[string]string{metav1.InitialEventsAnnotationKey: "true"})
	}
	var out interface{} = obj
	switch ws.rc.out.kind {
	case outTable:
		t := &metav1.Table{ListMeta: metav1.ListMeta{ResourceVersion: m.GetResourceVersion()}}
		t.APIVersion, t.Kind = "meta.k8s.io/"+tableVersion(ws.rc), "Table"
		out = t
	case outPartial:
		out = toPartial(obj, ws.rc.out.version)
	}
	return ws.send(watch.Bookmark, out)
}

func (ws *watchStream) send(typ watch.EventType, obj interface{}) error {
	if ws.frames != nil {
		if err := ws.frames.send(typ, obj); err != nil {
			return err
		}
		ws.flush()
		return nil
	}
	raw, err := json.Marshal(obj)
	if err != nil {
		return fmt.Errorf("encode watch event: %w", err)
	}
	ev := metav1.WatchEvent{Type: string(typ), Object: runtime.RawExtension{Raw: raw}}
	if err := ws.enc.Encode(&ev); err != nil {
		return err
	}
	ws.flush()
	return nil
}
