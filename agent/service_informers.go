package agent

import (
	"context"

	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"

	"github.com/orch/orch/internal/cachetrim"
	"github.com/orch/orch/internal/handlermux"
)

// serviceInformers is the agent's one informer factory for what several
// of its parts watch cluster-wide: Services and EndpointSlices (the
// Service proxy, cluster DNS, the ingress controller, the kubelet's
// service environment variables). Each part gets a view (view): it
// registers its informers and handlers there, and when it stops, its
// handlers go while the informers run on for the others until stop.
type serviceInformers struct {
	base   *handlermux.Factory
	ctx    context.Context
	cancel context.CancelFunc
}

func newServiceInformers(ctx context.Context, client kubernetes.Interface) *serviceInformers {
	ctx, cancel := context.WithCancel(ctx)
	f := informers.NewSharedInformerFactoryWithOptions(client, 0, cachetrim.Option())
	return &serviceInformers{base: handlermux.Wrap(f, "", nil), ctx: ctx, cancel: cancel}
}

// view is one part's factory over the shared informers.
func (s *serviceInformers) view() informers.SharedInformerFactory {
	return handlermux.NewView(s.base, func() { s.base.StartWithContext(s.ctx) })
}

// stop ends the informers and waits for them; call it after every part
// using a view has stopped.
func (s *serviceInformers) stop() {
	s.cancel()
	s.base.Shutdown()
}
