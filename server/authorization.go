package server

import (
	"context"
	"errors"

	"go.uber.org/zap"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"

	"github.com/orch/orch/server/apiserver"
	"github.com/orch/orch/server/auth"
	"github.com/orch/orch/server/auth/rbac"
	"github.com/orch/orch/server/auth/rbac/bootstrap"
	"github.com/orch/orch/server/reviews"
)

// authorization is the API server's authorizer and what feeds it: system:masters,
// then the node rules (over the pod graph), then RBAC (over the roles and
// bindings cache). Both caches are filled from the loopback client once the
// API server exists (start).
type authorization struct {
	nodeGraph *auth.LateGraph
	rbac      *rbac.Late
	resolver  *rbac.Resolver
	authz     *auth.RuleAuthorizer
}

func newAuthorization(log *zap.Logger) *authorization {
	a := &authorization{nodeGraph: &auth.LateGraph{}, rbac: &rbac.Late{}}
	a.resolver = &rbac.Resolver{L: a.rbac}
	a.authz = auth.NewAuthorizer(log.Named("authz"), auth.NodeRule(a.nodeGraph), rbac.Rule(a.resolver))
	return a
}

// register registers the node graph's and RBAC's informers with f (the
// server's shared cache, which the caller starts).
func (a *authorization) register(f informers.SharedInformerFactory) {
	a.nodeGraph.Set(auth.NewPodGraph(f))
	a.rbac.Set(rbac.NewLister(f))
}

// ready reports whether RBAC's cache has loaded (for /readyz).
func (a *authorization) ready() error {
	if !a.rbac.Synced() {
		return errors.New("the RBAC roles and bindings are not loaded yet")
	}
	return nil
}

// reviews are the authorization.k8s.io review APIs.
func (a *authorization) reviews() []apiserver.Virtual {
	return reviews.Authorization(a.authz, a.resolver)
}

// bootstrapPolicy reconciles the default RBAC policy (leader only).
func bootstrapPolicy(client kubernetes.Interface, log *zap.Logger) func(context.Context) error {
	return func(ctx context.Context) error { return bootstrap.Reconcile(ctx, client, log.Named("rbac-bootstrap")) }
}
