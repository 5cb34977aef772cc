package runtime

import (
	"context"
	"testing"

	"github.com/containerd/containerd/v2/pkg/oci"
)

func TestResourceOptsUnified(t *testing.T) {
	sp := &oci.Spec{}
	for _, o := range resourceOpts(Resources{Unified: map[string]string{"memory.oom.group": "1"}}) {
		if err := o(context.Background(), nil, nil, sp); err != nil {
			t.Fatal(err)
		}
	}
	if sp.Linux == nil || sp.Linux.Resources.Unified["memory.oom.group"] != "1" {
		t.Fatalf("unified not set: %+v", sp.Linux)
	}
	if len(resourceOpts(Resources{})) != 0 {
		t.Fatal("options without resources")
	}
}
