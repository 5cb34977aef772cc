package agent

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/kubernetes"

	"github.com/orch/orch/internal/handlermux"
)

// sharedInformers are the agent's informer factories, each watch shared
// by the components that need it: the Services and EndpointSlices that
// the DNS server, the proxy, the ingress and the kubelet read come from
// one watch each, not one per component (each watch is a stream from the
// server and a cache of every Service of the cluster), and the node's own
// Node from one watch for its re-registration and local-path storage.
// Each component gets a View; the informers run until stop.
type sharedInformers struct {
	cluster *handlermux.Shared // cluster-wide
	node    *handlermux.Shared // Nodes: this node only
}

func newSharedInformers(client kubernetes.Interface, nodeName string) sharedInformers {
	own := func(o *metav1.ListOptions) {
		o.FieldSelector = fields.OneTermEqualSelector("metadata.name", nodeName).String()
	}
	return sharedInformers{
		cluster: handlermux.NewShared(handlermux.NewTrimmed(client, nil)),
		node:    handlermux.NewShared(handlermux.NewTrimmed(client, own)),
	}
}

// stop ends every shared informer and waits for them.
func (s sharedInformers) stop() {
	s.cluster.Stop()
	s.node.Stop()
}
