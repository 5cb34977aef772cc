package server

import (
	"testing"

	"github.com/orch/orch/server/controllers/kit"
)

func TestBuiltinIngressDisable(t *testing.T) {
	list := []sharedController{{name: "deployment"}, {name: "ingress"}}
	if got := builtinIngress(list, nil); got[1].name != "ingress" {
		t.Fatalf("enabled: %v", got[1].name)
	}
	got := builtinIngress(list, []string{"traefik", DisableIngress})
	if len(got) != 2 || got[1].name != "ingress class removal" || got[0].name != "deployment" {
		t.Fatalf("disabled: %+v", got)
	}
	if r, err := got[1].build(&kit.Context{}); err != nil {
		t.Fatal(err)
	} else if _, ok := r.(removeClass); !ok {
		t.Fatalf("runner %T", r)
	}
}
