package etcdstore

import (
	"context"
	"errors"
	"fmt"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/orch/orch/datastore"
)

// watchBuffer is how many undelivered events a watcher may have before it
// is considered too slow and its channel is closed (as in the Raft store).
const watchBuffer = 1024

// Watch implements datastore.Store with an etcd watch from fromRev+1 that
// carries previous values. A fromRev older than etcd's compaction (or than
// Config.HistoryRevisions) fails with ErrCompacted; a compaction that
// overtakes a running watch closes its channel.
func (s *Store) Watch(ctx context.Context, prefix string, fromRev int64) (<-chan datastore.Event, error) {
	if s.closed.Load() {
		return nil, fmt.Errorf("watch %q: %w", prefix, datastore.ErrClosed)
	}
	if fromRev < 0 {
		return nil, fmt.Errorf("watch %q: negative revision %d", prefix, fromRev)
	}
	start, end := rangeOf(prefix, "")
	if err := s.checkWatchable(ctx, start, end, fromRev); err != nil {
		return nil, fmt.Errorf("watch %q from revision %d: %w", prefix, fromRev, err)
	}
	if fromRev == 0 {
		fromRev = s.Revision()
	}
	wctx, cancel := context.WithCancel(clientv3.WithRequireLeader(ctx))
	stop := context.AfterFunc(s.ctx, cancel)
	wch := s.watcher.Watch(wctx, start, clientv3.WithRange(end), clientv3.WithPrevKV(), clientv3.WithRev(fromRev+1))
	out := make(chan datastore.Event, watchBuffer)
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		defer stop()
		s.forward(wch, out)
		close(out)
		cancel()
		for range wch { // let the client finish the cancelled watch
		}
	}()
	return out, nil
}

// checkWatchable fails with ErrCompacted when events after fromRev are gone;
// for fromRev 0 it refreshes Revision so the watch starts at "now".
func (s *Store) checkWatchable(ctx context.Context, start, end string, fromRev int64) error {
	if fromRev == 0 {
		return s.Sync(ctx)
	}
	if err := s.checkHistory(fromRev); err != nil {
		return err
	}
	// A read at fromRev fails exactly when etcd compacted past it.
	resp, err := s.kv.Get(ctx, start, clientv3.WithRange(end), clientv3.WithCountOnly(), clientv3.WithRev(fromRev))
	switch {
	case errors.Is(err, rpctypes.ErrFutureRev):
		return nil // etcd waits for it, as it should
	case err != nil:
		return s.mapErr(err)
	}
	s.observe(resp.Header.Revision)
	return nil
}

// forward converts etcd events into out until the watch ends, is compacted,
// fails or out overflows.
func (s *Store) forward(wch clientv3.WatchChan, out chan<- datastore.Event) {
	for resp := range wch {
		if resp.CompactRevision != 0 || resp.Canceled || resp.Err() != nil {
			if err := resp.Err(); err != nil && !errors.Is(err, context.Canceled) && !s.closed.Load() {
				s.log.Debug("watch ended", zap.Error(err))
			}
			return
		}
		for _, ev := range resp.Events {
			select {
			case out <- toEvent(ev):
			default:
				s.log.Debug("watcher too slow, closing it")
				return
			}
		}
		if n := len(resp.Events); n > 0 {
			s.observe(resp.Events[n-1].Kv.ModRevision)
		}
	}
}

// toEvent converts an etcd event to the datastore's shape.
func toEvent(ev *clientv3.Event) datastore.Event {
	rev := ev.Kv.ModRevision
	var prev *datastore.KV
	if ev.PrevKv != nil {
		p := toKV(ev.PrevKv)
		prev = &p
	}
	switch {
	case ev.Type == clientv3.EventTypeDelete:
		kv := datastore.KV{Key: string(ev.Kv.Key), ModRevision: rev}
		if prev != nil {
			kv = *prev
			kv.Value = append([]byte(nil), prev.Value...)
			kv.ModRevision = rev
		}
		return datastore.Event{Type: datastore.EventDelete, Revision: rev, KV: kv, PrevKV: prev}
	case ev.IsCreate():
		return datastore.Event{Type: datastore.EventCreate, Revision: rev, KV: toKV(ev.Kv)}
	}
	return datastore.Event{Type: datastore.EventUpdate, Revision: rev, KV: toKV(ev.Kv), PrevKV: prev}
}
