package server

import (
	"context"
	"time"

	"go.uber.org/zap"

	"github.com/orch/orch/server/auth/rbac/bootstrap"
)

// bootstrappedKeys are objects the leader's bootstrap creates (the kubernetes
// Service and the default RBAC bindings): once they all exist the cluster is
// bootstrapped, whoever did it.
func bootstrappedKeys() []string {
	keys := []string{"/registry/services/default/kubernetes", "/registry/namespaces/kube-system"}
	for _, b := range bootstrap.ClusterRoleBindings() {
		keys = append(keys, "/registry/rbac.authorization.k8s.io/clusterrolebindings/"+b.Name)
	}
	return keys
}

// awaitBootstrapped makes a server that shares an external etcd with the
// leader ready once the leader has bootstrapped the cluster: only the leader
// runs the bootstrap (it writes this server's address into the kubernetes
// Endpoints), yet every server serves the API. The embedded Raft store keeps
// its single-server behaviour (ready only after its own bootstrap).
func awaitBootstrapped(ctx context.Context, store backend, ready *readyState, log *zap.Logger) {
	if _, ok := store.(*etcdBackend); !ok {
		return
	}
	keys := bootstrappedKeys()
	for {
		select {
		case <-ctx.Done():
			return
		case <-ready.ch:
			return
		case <-time.After(500 * time.Millisecond):
		}
		if allExist(ctx, store, keys) {
			log.Info("the cluster is bootstrapped (by the datastore leader)")
			ready.set()
			return
		}
	}
}

func allExist(ctx context.Context, store backend, keys []string) bool {
	for _, k := range keys {
		if _, err := store.Get(ctx, k); err != nil {
			return false
		}
	}
	return true
}
