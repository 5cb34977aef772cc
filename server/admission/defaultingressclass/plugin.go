// Package defaultingressclass is the DefaultIngressClass admission plug-in:
// an Ingress created without spec.ingressClassName gets the IngressClass
// annotated ingressclass.kubernetes.io/is-default-class=true (the newest
// one when several are), as upstream's plug-in does.
package defaultingressclass

import (
	"context"
	"encoding/json"
	"fmt"

	networkingv1 "k8s.io/api/networking/v1"

	"github.com/orch/orch/datastore"
	"github.com/orch/orch/server/admission"
)

// annotation marks the default IngressClass.
const annotation = "ingressclass.kubernetes.io/is-default-class"

// prefix is where IngressClasses are stored.
const prefix = "/registry/networking.k8s.io/ingressclasses/"

// Plugin is the DefaultIngressClass plug-in.
type Plugin struct {
	store datastore.Store
}

var _ admission.Mutator = (*Plugin)(nil)

// New returns the plug-in reading IngressClasses from store.
func New(store datastore.Store) *Plugin { return &Plugin{store: store} }

// Name implements admission.Named.
func (p *Plugin) Name() string { return "DefaultIngressClass" }

// Handles implements admission.Mutator: creates.
func (p *Plugin) Handles(op admission.Operation) bool { return op == admission.Create }

// Admit implements admission.Mutator.
func (p *Plugin) Admit(ctx context.Context, a *admission.Attributes) error {
	ing, ok := a.Object.(*networkingv1.Ingress)
	if !ok || a.Subresource != "" || ing.Spec.IngressClassName != nil {
		return nil
	}
	if _, legacy := ing.Annotations["kubernetes.io/ingress.class"]; legacy {
		return nil
	}
	def, err := p.defaultClass(ctx)
	if err != nil || def == "" {
		return err
	}
	ing.Spec.IngressClassName = &def
	return nil
}

// defaultClass is the newest IngressClass marked default, or "".
func (p *Plugin) defaultClass(ctx context.Context) (string, error) {
	page, err := p.store.List(ctx, prefix, "", 0)
	if err != nil {
		return "", fmt.Errorf("listing IngressClasses: %w", err)
	}
	var best *networkingv1.IngressClass
	for _, kv := range page.KVs {
		var ic networkingv1.IngressClass
		if json.Unmarshal(kv.Value, &ic) != nil || ic.Annotations[annotation] != "true" {
			continue
		}
		if best == nil || ic.CreationTimestamp.After(best.CreationTimestamp.Time) {
			c := ic
			best = &c
		}
	}
	if best == nil {
		return "", nil
	}
	return best.Name, nil
}
