package replicaset

import (
	"sync"
	"time"
)

// ExpectationsTimeout is how long a controller waits for the cache to show
// the creations and deletions it asked for before it syncs anyway (as
// upstream: a lost watch event must not wedge a ReplicaSet forever).
const ExpectationsTimeout = 5 * time.Minute

// expectation is what one owner still waits to observe.
type expectation struct {
	adds    int
	deletes map[string]bool // pod keys
	at      time.Time
}

// Expectations tracks, per owner key, the pod creations and deletions a
// sync asked for and the cache has not shown yet. Safe for concurrent use.
type Expectations struct {
	mu  sync.Mutex
	m   map[string]*expectation
	now func() time.Time
}

// NewExpectations returns empty expectations; now nil = time.Now.
func NewExpectations(now func() time.Time) *Expectations {
	if now == nil {
		now = time.Now
	}
	return &Expectations{m: map[string]*expectation{}, now: now}
}

// Satisfied reports whether key may sync: nothing is pending, or what is
// pending has waited longer than ExpectationsTimeout.
func (e *Expectations) Satisfied(key string) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	x, ok := e.m[key]
	if !ok {
		return true
	}
	if x.adds <= 0 && len(x.deletes) == 0 {
		return true
	}
	return e.now().Sub(x.at) > ExpectationsTimeout
}

// ExpectCreations records that n pods are about to be created for key.
func (e *Expectations) ExpectCreations(key string, n int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.m[key] = &expectation{adds: n, deletes: map[string]bool{}, at: e.now()}
}

// ExpectDeletions records the pods about to be deleted for key.
func (e *Expectations) ExpectDeletions(key string, pods []string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	x := &expectation{deletes: map[string]bool{}, at: e.now()}
	for _, p := range pods {
		x.deletes[p] = true
	}
	e.m[key] = x
}

// CreationObserved lowers the pending creations of key by one.
func (e *Expectations) CreationObserved(key string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if x, ok := e.m[key]; ok && x.adds > 0 {
		x.adds--
	}
}

// DeletionObserved marks pod as gone for key (once per pod).
func (e *Expectations) DeletionObserved(key, pod string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if x, ok := e.m[key]; ok {
		delete(x.deletes, pod)
	}
}

// Delete forgets key (its owner is gone).
func (e *Expectations) Delete(key string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	delete(e.m, key)
}
