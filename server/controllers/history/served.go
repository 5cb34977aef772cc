package history

import (
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
)

// NewStore returns a Store on the shared informers, or, when the API server
// does not serve apps/v1 controllerrevisions, one without a cache (no
// informer is registered then: it would never sync and hold up every
// controller of the shared cache). synced is nil in that case.
func NewStore(client kubernetes.Interface, f informers.SharedInformerFactory) (s *Store, synced cache.InformerSynced) {
	if !served(client.Discovery()) {
		return &Store{Client: client}, nil
	}
	inf := f.Apps().V1().ControllerRevisions()
	return &Store{Client: client, Lister: inf.Lister()}, inf.Informer().HasSynced
}

func served(d discovery.DiscoveryInterface) bool {
	rl, err := d.ServerResourcesForGroupVersion("apps/v1")
	if err != nil {
		return false
	}
	for _, r := range rl.APIResources {
		if r.Name == "controllerrevisions" {
			return true
		}
	}
	return false
}
