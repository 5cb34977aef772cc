package job

import (
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
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
	// rmFinalizers are pods whose tracking finalizer this controller
	// removed and the cache does not show gone yet: they are counted
	// already (upstream's finalizerExpectations).
	rmFinalizers map[types.UID]bool
}

func newExpectations() *expectations { return &expectations{m: map[string]*expected{}} }

func (e *expectations) get(key string, job types.UID) *expected {
	x := e.m[key]
	if x == nil || x.job != job {
		x = &expected{job: job, dels: map[types.UID]bool{}, rmFinalizers: map[types.UID]bool{}}
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

// expectFinalizerRemoval records a finalizer removal about to be made.
func (e *expectations) expectFinalizerRemoval(key string, job, pod types.UID) {
	e.mu.Lock()
	defer e.mu.Unlock()
	x := e.m[key]
	if x == nil || x.job != job {
		x = &expected{job: job, dels: map[types.UID]bool{}, rmFinalizers: map[types.UID]bool{}, since: time.Now()}
		e.m[key] = x
	}
	x.rmFinalizers[pod] = true
}

// finalizerRemoved records that the cache shows the pod without the
// finalizer (or gone), or that the removal failed.
func (e *expectations) finalizerRemoved(key string, job, pod types.UID) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if x := e.m[key]; x != nil && (x.job == job || job == "") {
		delete(x.rmFinalizers, pod)
	}
}

// finalizersExpected are the pods whose finalizer removal is not seen yet.
func (e *expectations) finalizersExpected(key string, job types.UID) sets.Set[types.UID] {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := sets.New[types.UID]()
	if x := e.m[key]; x != nil && x.job == job {
		for uid := range x.rmFinalizers {
			out.Insert(uid)
		}
	}
	return out
}

func (e *expectations) forget(key string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	delete(e.m, key)
}
