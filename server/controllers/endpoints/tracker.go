package endpoints

import (
	"sync"
	"time"

	discoveryv1 "k8s.io/api/discovery/v1"
)

// trackWindow is how long a created slice is waited for in the cache
// (after that it was deleted by someone else, or the cache is broken).
const trackWindow = 5 * time.Second

// createdSlices remembers the slices the controller created per Service
// until its cache has them, as upstream's EndpointSliceTracker does: a
// sync acting on a cache without them would create them again.
type createdSlices struct {
	mu sync.Mutex
	m  map[string]map[string]time.Time // Service key → slice name → created at
}

func (t *createdSlices) add(key, name string, now time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.m == nil {
		t.m = map[string]map[string]time.Time{}
	}
	if t.m[key] == nil {
		t.m[key] = map[string]time.Time{}
	}
	t.m[key][name] = now
}

// pending reports whether a slice created for key is not in existing
// yet; seen and expired ones are forgotten.
func (t *createdSlices) pending(key string, existing []*discoveryv1.EndpointSlice, now time.Time) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	names := t.m[key]
	for _, s := range existing {
		delete(names, s.Name)
	}
	waiting := false
	for n, at := range names {
		if now.Sub(at) > trackWindow {
			delete(names, n)
			continue
		}
		waiting = true
	}
	if len(names) == 0 {
		delete(t.m, key)
	}
	return waiting
}
