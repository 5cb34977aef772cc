package datastore

import (
	"fmt"
	"sort"
)

// listAt serves a List as of an earlier revision rev: it reads the current
// state (at revision cur) and rolls it back with the kept event history of
// (rev, cur]. This gives continue pages of a paginated list the snapshot of
// the first page, as etcd's MVCC reads do, without keeping old versions on
// disk. When rev is older than the history it fails with ErrCompacted (the
// API answers 410 Gone, like a compacted etcd revision).
//
// Correctness of the page cut: undoing a create removes at most one key, so
// reading limit+creates current keys leaves at least limit keys at or below
// the last key read, and every key of the old state in that range is either
// still current or restored from a delete/update event.
func listAt(h *watchHub, list func(startKey string, limit int64) (ListResult, error),
	prefix, startKey string, limit, rev int64) (ListResult, error) {
	if startKey < prefix {
		startKey = prefix
	}
	probe, err := list(startKey, 1)
	if err != nil {
		return ListResult{}, err
	}
	if rev >= probe.Revision {
		return list(startKey, limit) // nothing happened since rev (or rev is from the future: read now)
	}
	events, err := h.between(prefix, startKey, rev, probe.Revision)
	if err != nil {
		return ListResult{}, err
	}
	creates := int64(0)
	for _, ev := range events {
		if ev.Type == EventCreate {
			creates++
		}
	}
	readLimit := limit
	if limit > 0 {
		readLimit = limit + creates
	}
	cur, err := list(startKey, readLimit)
	if err != nil {
		return ListResult{}, err
	}
	if cur.Revision != probe.Revision {
		// More writes landed between the two reads; roll those back too.
		more, err := h.between(prefix, startKey, probe.Revision, cur.Revision)
		if err != nil {
			return ListResult{}, err
		}
		return rollBack(cur, append(events, more...), limit, rev), nil
	}
	return rollBack(cur, events, limit, rev), nil
}

// rollBack undoes events (in reverse revision order) on the page cur and
// cuts it to limit keys.
func rollBack(cur ListResult, events []Event, limit, rev int64) ListResult {
	state := make(map[string]KV, len(cur.KVs)+len(events))
	for _, kv := range cur.KVs {
		state[kv.Key] = kv
	}
	for i := len(events) - 1; i >= 0; i-- {
		ev := events[i]
		switch {
		case ev.Type == EventCreate || ev.PrevKV == nil:
			delete(state, ev.KV.Key)
		default:
			state[ev.KV.Key] = *ev.PrevKV
		}
	}
	keys := make([]string, 0, len(state))
	for k := range state {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	res := ListResult{Revision: rev, More: cur.More}
	if limit > 0 && int64(len(keys)) > limit {
		keys, res.More = keys[:limit], true
	}
	res.KVs = make([]KV, len(keys))
	for i, k := range keys {
		res.KVs[i] = state[k]
	}
	return res
}

// errListAt wraps a listAt failure with what was asked.
func errListAt(prefix string, rev int64, err error) error {
	return fmt.Errorf("list %q at revision %d: %w", prefix, rev, err)
}
