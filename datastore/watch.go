package datastore

import (
	"context"
	"fmt"
	"strings"
	"sync"
)

// watchBuffer is how many undelivered live events a watcher may have before
// it is considered too slow and its channel is closed.
const watchBuffer = 1024

// watchChanSize is the capacity of a watcher's channel. Undelivered events
// wait in the watcher's queue, which grows only while they do: a channel
// of watchBuffer events (about 100 bytes each) per watcher was most of an
// idle server's watch memory.
const watchChanSize = 8

// watcher is one Watch call. The hub appends matching events to queue; the
// watcher's forward goroutine, the only sender on ch, moves them to ch and
// closes ch when the watcher ends.
type watcher struct {
	prefix  string
	fromRev int64 // deliver only events with Revision > fromRev
	limit   int   // queued events beyond which the watcher is too slow
	ch      chan Event
	wake    chan struct{} // capacity 1: events were queued
	done    chan struct{} // closed when the hub drops the watcher

	mu    sync.Mutex
	queue []Event
}

// push queues ev; false means the watcher is too slow.
func (w *watcher) push(ev Event) bool {
	w.mu.Lock()
	if len(w.queue) >= w.limit {
		w.mu.Unlock()
		return false
	}
	w.queue = append(w.queue, ev)
	w.mu.Unlock()
	select {
	case w.wake <- struct{}{}:
	default:
	}
	return true
}

// take returns the queued events and starts a new queue in spare's array.
func (w *watcher) take(spare []Event) []Event {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := w.queue
	w.queue = spare[:0]
	return out
}

// watchHub fans out committed events to watchers and keeps a bounded history
// of recent events so watchers can resume from an older revision. Writers
// publish in revision order into each watcher's queue under mu, so a
// publish never blocks on a slow watcher.
type watchHub struct {
	mu         sync.Mutex
	size       int
	history    []Event
	compactRev int64 // events with Revision <= compactRev may be missing
	lastRev    int64 // revision of the last published batch
	watchers   map[*watcher]struct{}
	closed     bool
	published  *sync.Cond // broadcast on every publish, reset and close
}

// newWatchHub returns a hub keeping size events, starting at revision rev.
func newWatchHub(size int, rev int64) *watchHub {
	if size <= 0 {
		size = 1000
	}
	h := &watchHub{size: size, compactRev: rev, lastRev: rev, watchers: map[*watcher]struct{}{}}
	h.published = sync.NewCond(&h.mu)
	return h
}

// publish records events (all with revisions <= rev, in order) and delivers
// them; rev becomes the hub's current revision.
func (h *watchHub) publish(events []Event, rev int64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return
	}
	h.history = append(h.history, events...)
	if drop := len(h.history) - h.size; drop > 0 {
		h.compactRev = h.history[drop-1].Revision
		// The array keeps its first slots until append moves the
		// history: clear them, or up to twice size events' values stay
		// reachable.
		clear(h.history[:drop])
		h.history = h.history[drop:]
	}
	if rev > h.lastRev {
		h.lastRev = rev
	}
	for w := range h.watchers {
		h.deliver(w, events)
	}
	h.published.Broadcast()
}

// deliver queues matching events for w, dropping w when it is too slow.
func (h *watchHub) deliver(w *watcher, events []Event) {
	for _, ev := range events {
		if ev.Revision <= w.fromRev || !strings.HasPrefix(ev.KV.Key, w.prefix) {
			continue
		}
		if !w.push(ev) {
			h.drop(w)
			return
		}
	}
}

// drop unregisters w; its forward goroutine then delivers what was queued
// and closes its channel. Callers hold mu.
func (h *watchHub) drop(w *watcher) {
	if _, ok := h.watchers[w]; !ok {
		return
	}
	delete(h.watchers, w)
	close(w.done)
}

// watch registers a watcher for prefix from fromRev (0 = from now) and
// replays the kept history after fromRev into its channel.
func (h *watchHub) watch(ctx context.Context, prefix string, fromRev int64) (<-chan Event, error) {
	if fromRev < 0 {
		return nil, fmt.Errorf("watch %q: negative revision %d", prefix, fromRev)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return nil, fmt.Errorf("watch %q: %w", prefix, ErrClosed)
	}
	if fromRev == 0 {
		fromRev = h.lastRev
	} else if fromRev < h.compactRev {
		return nil, fmt.Errorf("watch %q from revision %d (oldest kept %d): %w",
			prefix, fromRev, h.compactRev, ErrCompacted)
	}
	var replay []Event
	for _, ev := range h.history {
		if ev.Revision > fromRev && strings.HasPrefix(ev.KV.Key, prefix) {
			replay = append(replay, ev)
		}
	}
	w := &watcher{prefix: prefix, fromRev: fromRev, limit: len(replay) + watchBuffer, queue: replay,
		ch: make(chan Event, watchChanSize), wake: make(chan struct{}, 1), done: make(chan struct{})}
	h.watchers[w] = struct{}{}
	go h.forward(ctx, w)
	return w.ch, nil
}

// forward moves w's queued events to its channel until ctx ends (dropping
// w) or the hub drops w (then what was queued is still delivered, as a
// closed buffered channel would), and closes the channel.
func (h *watchHub) forward(ctx context.Context, w *watcher) {
	defer close(w.ch)
	var batch []Event
	for {
		if batch = w.take(batch); len(batch) == 0 {
			select {
			case <-w.wake:
				continue
			case <-w.done: // no push follows a drop: one last take
				if batch = w.take(batch); len(batch) == 0 {
					return
				}
			case <-ctx.Done():
				h.cancel(w)
				return
			}
		}
		for i, ev := range batch {
			select {
			case w.ch <- ev:
				batch[i] = Event{} // let the values go once delivered
			case <-ctx.Done():
				h.cancel(w)
				return
			}
		}
	}
}

// cancel drops w after its caller's context ended.
func (h *watchHub) cancel(w *watcher) {
	h.mu.Lock()
	h.drop(w)
	h.mu.Unlock()
}

// reset forgets the history and closes every watcher; used when the state is
// replaced wholesale (snapshot restore). rev is the new current revision.
func (h *watchHub) reset(rev int64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for w := range h.watchers {
		h.drop(w)
	}
	h.history = nil
	h.compactRev, h.lastRev = rev, rev
	h.published.Broadcast()
}

// close drops every watcher and refuses new ones.
func (h *watchHub) close() {
	h.mu.Lock()
	defer h.mu.Unlock()
	for w := range h.watchers {
		h.drop(w)
	}
	h.closed = true
	h.history = nil
	h.published.Broadcast()
}

// between returns the kept events with fromRev < Revision <= toRev whose key
// has prefix and is >= startKey, in revision order. It waits until events up
// to toRev are published (a reader can see a committed state just before its
// events reach the hub) and fails with ErrCompacted when fromRev is older
// than the history.
func (h *watchHub) between(prefix, startKey string, fromRev, toRev int64) ([]Event, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for h.lastRev < toRev && !h.closed {
		h.published.Wait()
	}
	if h.closed {
		return nil, ErrClosed
	}
	if fromRev < h.compactRev {
		return nil, fmt.Errorf("list %q at revision %d (oldest kept %d): %w", prefix, fromRev, h.compactRev, ErrCompacted)
	}
	var out []Event
	for _, ev := range h.history {
		k := ev.KV.Key
		if ev.Revision > fromRev && ev.Revision <= toRev && strings.HasPrefix(k, prefix) && k >= startKey {
			out = append(out, ev)
		}
	}
	return out, nil
}
