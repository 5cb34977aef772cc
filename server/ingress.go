package server

import (
	"context"
	"slices"

	"k8s.io/client-go/kubernetes"

	ingresscontroller "github.com/orch/orch/server/controllers/ingress"
	"github.com/orch/orch/server/controllers/kit"
)

// DisableIngress is the --disable value that turns off the built-in
// Ingress controller (as k3s's --disable traefik).
const DisableIngress = "ingress"

// builtinIngress replaces the ingress controller, with --disable ingress,
// by a one-shot removal of its IngressClass: the agents then close ports
// 80 and 443 for another ingress controller.
func builtinIngress(list []sharedController, disable []string) []sharedController {
	if !slices.Contains(disable, DisableIngress) {
		return list
	}
	out := make([]sharedController, 0, len(list))
	for _, sc := range list {
		if sc.name == "ingress" {
			sc = sharedController{"ingress class removal", func(kc *kit.Context) (runner, error) {
				return removeClass{kc.Client}, nil
			}}
		}
		out = append(out, sc)
	}
	return out
}

// removeClass deletes the IngressClass orch once.
type removeClass struct{ client kubernetes.Interface }

func (r removeClass) Run(ctx context.Context) error {
	return ingresscontroller.RemoveClass(ctx, r.client)
}
