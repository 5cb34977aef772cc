package job

import (
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// expectationsTimeout bounds how long a sync waits for the cache to show
// pods it created or deleted (upstream's ExpectationsTimeout).
const expectationsTimeout = 5 * time.Minute

// expectations counts pod creations and deletions a Job's sync made that the
// cache has not shown yet, so a lagging cache never makes it create or
// delete pods twice (upstream's ControllerExpectations, uid-tracked deletes).
type expectations struct {
	mu sync.Mutex
	m  map[string]*expected
}

type expected struct {
	job   types.UID
	adds  int
	dels  map[types.UID]bool
	since time.Time
}

func newExpectations() *expectations { return &expectations{m: map[string]*expected{}} }

func (e *expectations) get(key string, job types.UID) *expected {
	x := e.m[key]
	if x == nil || x.job != job {
		x = &expected{job: job, dels: map[types.UID]bool{}}
		e.m[key] = x
	}
	x.since = time.Now()
	return x
}

// expectAdds records n pods about to be created.
func (e *expectations) expectAdds(key string, job types.UID, n int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.get(key, job).adds += n
}

// expectDelete records a pod about to be deleted.
func (e *expectations) expectDelete(key string, job types.UID, pod types.UID) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.get(key, job).dels[pod] = true
}

// lowerAdd is called when a create failed or its pod was seen.
func (e *expectations) lowerAdd(key string, job types.UID) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if x := e.m[key]; x != nil && x.job == job && x.adds > 0 {
		x.adds--
	}
}

// observe records a pod add (add=true) seen by the cache.
func (e *expectations) observe(key string, job types.UID, add bool) {
	if add {
		e.lowerAdd(key, job)
	}
}

// observeDeleting records that a pod's deletion (mark or removal) was seen.
func (e *expectations) observeDeleting(key string, job types.UID, pod types.UID) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if x := e.m[key]; x != nil && x.job == job {
		delete(x.dels, pod)
	}
}

// satisfied tells whether the cache shows everything the last syncs did.
func (e *expectations) satisfied(key string, job types.UID) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	x := e.m[key]
	if x == nil || x.job != job {
		return true
	}
	return (x.adds <= 0 && len(x.dels) == 0) || time.Since(x.since) > expectationsTimeout
}

func (e *expectations) forget(key string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	delete(e.m, key)
}
