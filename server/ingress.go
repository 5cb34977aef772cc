package server

import (
	"context"
	"slices"

	"k8s.io/client-go/kubernetes"

	ingresscontroller "github.com/orch/orch/server/controllers/ingress"
)

// DisableIngress is the --disable value that turns off the built-in
// Ingress controller (as k3s's --disable traefik).
const DisableIngress = "ingress"

// ingressClassStep is the leader's bootstrap step for the built-in
// ingress: it creates the IngressClass orch before the server reports
// ready (so Ingresses created from then on get it as their default class),
// or, with --disable ingress, deletes it, and the agents close ports 80
// and 443 for another ingress controller.
func ingressClassStep(disable []string, client kubernetes.Interface) func(context.Context) error {
	if slices.Contains(disable, DisableIngress) {
		return func(ctx context.Context) error { return ingresscontroller.RemoveClass(ctx, client) }
	}
	return func(ctx context.Context) error { return ingresscontroller.EnsureClass(ctx, client) }
}

// builtinIngress drops the ingress status controller with --disable ingress.
func builtinIngress(list []sharedController, disable []string) []sharedController {
	if !slices.Contains(disable, DisableIngress) {
		return list
	}
	return slices.DeleteFunc(slices.Clone(list), func(sc sharedController) bool { return sc.name == "ingress" })
}
