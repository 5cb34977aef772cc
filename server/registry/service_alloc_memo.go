package registry

import (
	"runtime"
	"sync"
	"weak"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"
)

// autoMemo remembers which values AllocateOnCreate chose itself for a
// Service object. The API layer retries a create with the same object when
// the transaction lost a race on an allocation key; on the retry those values
// must be chosen again rather than treated as requested by the client.
// Entries are keyed weakly and dropped when the object is garbage collected.
type autoMemo struct {
	mu sync.Mutex
	m  map[weak.Pointer[corev1.Service]]autoAssigned
}

type autoAssigned struct {
	ip    string
	ports sets.Set[int32]
}

// forget undoes the values chosen for svc by an earlier attempt.
func (a *autoMemo) forget(svc *corev1.Service) {
	a.mu.Lock()
	prev, ok := a.m[weak.Make(svc)]
	delete(a.m, weak.Make(svc))
	a.mu.Unlock()
	if !ok {
		return
	}
	if prev.ip != "" && svc.Spec.ClusterIP == prev.ip {
		svc.Spec.ClusterIP, svc.Spec.ClusterIPs = "", nil
	}
	for i := range svc.Spec.Ports {
		if prev.ports.Has(svc.Spec.Ports[i].NodePort) {
			svc.Spec.Ports[i].NodePort = 0
		}
	}
	if prev.ports.Has(svc.Spec.HealthCheckNodePort) {
		svc.Spec.HealthCheckNodePort = 0
	}
}

// remember records the values chosen for svc by this attempt.
func (a *autoMemo) remember(svc *corev1.Service, v autoAssigned) {
	if v.ip == "" && v.ports.Len() == 0 {
		return
	}
	key := weak.Make(svc)
	a.mu.Lock()
	if a.m == nil {
		a.m = map[weak.Pointer[corev1.Service]]autoAssigned{}
	}
	_, had := a.m[key]
	a.m[key] = v
	a.mu.Unlock()
	if !had {
		runtime.AddCleanup(svc, func(k weak.Pointer[corev1.Service]) {
			a.mu.Lock()
			delete(a.m, k)
			a.mu.Unlock()
		}, key)
	}
}
