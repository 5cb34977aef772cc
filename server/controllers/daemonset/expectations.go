package daemonset

import (
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// expectTTL bounds how long a sync waits for the cache to show its writes
// (upstream's ExpectationsTimeout).
const expectTTL = 5 * time.Minute

// expectations remembers, per DaemonSet key, the pods it created (by name)
// and deleted (by UID) until the pod cache reflects them.
type expectations struct {
	mu  sync.Mutex
	per map[string]*pending
}

type pending struct {
	created map[string]bool
	deleted map[types.UID]bool
	at      time.Time
}

func newExpectations() *expectations { return &expectations{per: map[string]*pending{}} }

func (e *expectations) get(key string) *pending {
	p := e.per[key]
	if p == nil {
		p = &pending{created: map[string]bool{}, deleted: map[types.UID]bool{}}
		e.per[key] = p
	}
	p.at = time.Now()
	return p
}

func (e *expectations) created(key, pod string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.get(key).created[pod] = true
}

func (e *expectations) deleted(key string, uid types.UID) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.get(key).deleted[uid] = true
}

func (e *expectations) forget(key string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	delete(e.per, key)
}

// satisfied reports whether the cached pods show every recorded write;
// it forgets the writes they show.
func (e *expectations) satisfied(key string, cached []*corev1.Pod, now time.Time) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	p := e.per[key]
	if p == nil {
		return true
	}
	if now.Sub(p.at) > expectTTL {
		delete(e.per, key)
		return true
	}
	byName := make(map[string]*corev1.Pod, len(cached))
	uids := make(map[types.UID]*corev1.Pod, len(cached))
	for _, pod := range cached {
		byName[pod.Name], uids[pod.UID] = pod, pod
	}
	for name := range p.created {
		if byName[name] != nil {
			delete(p.created, name)
		}
	}
	for uid := range p.deleted {
		if pod := uids[uid]; pod == nil || pod.DeletionTimestamp != nil {
			delete(p.deleted, uid)
		}
	}
	if len(p.created) == 0 && len(p.deleted) == 0 {
		delete(e.per, key)
		return true
	}
	return false
}
