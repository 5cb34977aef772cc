package encryption

import (
	"context"
	"errors"
	"fmt"

	"github.com/orch/orch/datastore"
)

// reencryptPage is how many keys one List of Reencrypt reads.
const reencryptPage = 256

// maxReencryptConflicts bounds the retries of one key that keeps changing.
const maxReencryptConflicts = 10

// ReencryptResult counts what Reencrypt did.
type ReencryptResult struct {
	Scanned   int `json:"scanned"`   // keys of configured resources looked at
	Rewritten int `json:"rewritten"` // keys written again under the current first provider and key
}

// Reencrypt rewrites every value of the configured resources that is not
// stored under the current first provider and key (older keys, plaintext
// after encryption was turned on, ciphertext after identity was put first).
// Each rewrite is a compare-and-swap on the key's mod revision, so a
// concurrent write wins and is not lost (it was encrypted with the current
// key anyway); the rewrite produces a new revision, as upstream's read-and-
// write of each object does.
func (s *Store) Reencrypt(ctx context.Context) (ReencryptResult, error) {
	var res ReencryptResult
	for _, prefix := range s.scanPrefixes() {
		if err := s.reencryptPrefix(ctx, prefix, &res); err != nil {
			return res, err
		}
	}
	return res, nil
}

// scanPrefixes returns the key prefixes of every configured resource,
// without prefixes inside another one.
func (s *Store) scanPrefixes() []string {
	var out []string
	for _, r := range s.t.Load().rules {
		for _, m := range r.matchers {
			out = addPrefix(out, m.prefix)
		}
	}
	return out
}

func addPrefix(list []string, p string) []string {
	kept := list[:0:0]
	for _, q := range list {
		if len(p) >= len(q) && p[:len(q)] == q {
			return list // already covered
		}
		if len(q) < len(p) || q[:len(p)] != p {
			kept = append(kept, q)
		}
	}
	return append(kept, p)
}

func (s *Store) reencryptPrefix(ctx context.Context, prefix string, res *ReencryptResult) error {
	start := prefix
	for {
		page, err := s.inner.List(ctx, prefix, start, reencryptPage)
		if err != nil {
			return fmt.Errorf("listing %s: %w", prefix, err)
		}
		for _, kv := range page.KVs {
			if s.t.Load().ruleFor(kv.Key) == nil {
				continue
			}
			res.Scanned++
			done, err := s.reencryptKey(ctx, kv)
			if err != nil {
				return err
			}
			if done {
				res.Rewritten++
			}
		}
		if !page.More || len(page.KVs) == 0 {
			return nil
		}
		start = page.KVs[len(page.KVs)-1].Key + "\x00"
	}
}

// reencryptKey rewrites one raw kv when it is stale; it reports whether it wrote.
func (s *Store) reencryptKey(ctx context.Context, kv datastore.KV) (bool, error) {
	for range maxReencryptConflicts {
		t := s.t.Load()
		if t.current(kv.Key, kv.Value) {
			return false, nil
		}
		plain, err := t.decrypt(kv.Key, kv.Value)
		if err != nil {
			return false, err
		}
		enc, err := t.encrypt(kv.Key, plain)
		if err != nil {
			return false, fmt.Errorf("encrypting %q: %w", kv.Key, err)
		}
		_, err = s.inner.Update(ctx, kv.Key, enc, kv.ModRevision)
		switch {
		case err == nil:
			return true, nil
		case errors.Is(err, datastore.ErrNotFound):
			return false, nil // deleted meanwhile
		case !errors.Is(err, datastore.ErrConflict):
			return false, fmt.Errorf("rewriting %q: %w", kv.Key, err)
		}
		cur, err := s.inner.Get(ctx, kv.Key)
		if errors.Is(err, datastore.ErrNotFound) {
			return false, nil
		}
		if err != nil {
			return false, fmt.Errorf("reading %q: %w", kv.Key, err)
		}
		kv = *cur
	}
	return false, fmt.Errorf("rewriting %q: it changed %d times while being re-encrypted: %w", kv.Key, maxReencryptConflicts, datastore.ErrConflict)
}
