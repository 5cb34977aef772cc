package server

import (
	"fmt"

	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/orch/orch/internal/handlermux"
	"github.com/orch/orch/server/admission/webhook"
	"github.com/orch/orch/server/aggregator"
	"github.com/orch/orch/server/apf"
	"github.com/orch/orch/server/auth"
	"github.com/orch/orch/server/controllers/kit"
)

// sharedCache is the server's one informer factory over the loopback
// client, for the server's whole life. Authorization (RBAC, the node
// graph), APF, admission (webhooks, policies) and, while this server
// leads, the controllers (kit.Options.Cache) register their informers
// with it, so a type any of them caches is listed, watched and held once.
type sharedCache struct{ *handlermux.Shared }

func newSharedCache(client kubernetes.Interface) *sharedCache {
	return &sharedCache{handlermux.NewShared(handlermux.NewTrimmed(client, nil))}
}

// forControllers is the cache as the controllers' terms see it.
func (c *sharedCache) forControllers() *kit.SharedCache {
	return &kit.SharedCache{Factory: c.Factory, Start: c.Run}
}

// view is one leadership term's part of the cache: a leader-only loop
// that watches a type the cache already holds (Nodes) adds its handlers
// for the term instead of a watch of its own.
func (c *sharedCache) view() informers.SharedInformerFactory { return c.View() }

// startCaches registers the informers of authorization, APF and admission
// with the shared cache and starts it.
func startCaches(loopback *rest.Config, client kubernetes.Interface, parts *parts, cache *sharedCache) error {
	parts.authz.register(cache.Factory)
	apf.Watch(parts.apf, cache.Factory)
	parts.hooks.SetSource(webhook.NewSource(cache.Factory), aggregator.EndpointResolver{Client: client})
	if err := startPolicies(loopback, client, cache.Factory, parts.authz.authz, cache.Done(), parts.policies, parts.mutatingPolicies); err != nil {
		return err
	}
	cache.Run()
	return nil
}

// startPolicies starts the ValidatingAdmissionPolicy and
// MutatingAdmissionPolicy plug-ins over the loopback clients and the
// shared cache f (they share the namespaces and params) until stop.
func startPolicies(loopback *rest.Config, client kubernetes.Interface, f informers.SharedInformerFactory, authz auth.Authorizer,
	stop <-chan struct{}, plugins ...policyPlugin) error {
	dyn, err := dynamic.NewForConfig(loopback)
	if err != nil {
		return fmt.Errorf("policy dynamic client: %w", err)
	}
	for _, p := range plugins {
		if err := p.Start(client, dyn, f, authz, stop); err != nil {
			return err
		}
	}
	return nil
}
