package all

import (
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"

	"github.com/orch/orch/server/registry"
	"github.com/orch/orch/server/registry/admissionregistration"
	"github.com/orch/orch/server/registry/apiextensions"
	"github.com/orch/orch/server/registry/apiregistration"
	"github.com/orch/orch/server/registry/autoscaling"
	"github.com/orch/orch/server/registry/certificates"
	"github.com/orch/orch/server/registry/clusterconfig"
	"github.com/orch/orch/server/registry/core"
	"github.com/orch/orch/server/registry/flowcontrol"
	"github.com/orch/orch/server/registry/rbac"
	"github.com/orch/orch/server/registry/resource"
	"github.com/orch/orch/server/registry/serviceip"
	"github.com/orch/orch/server/registry/storagemigration"
)

// Groups lists every statically served group, in discovery order.
func Groups() []registry.Group {
	return []registry.Group{
		registry.Legacy(),
		core.Group(),
		apiregistration.Group(),
		apiextensions.Group(),
		admissionregistration.Group(),
		autoscaling.Group(),
		certificates.Group(),
		clusterconfig.Group(),
		rbac.Group(),
		flowcontrol.Group(),
		resource.Group(),
		serviceip.Group(),
		storagemigration.Group(),
	}
}

// Resources returns the resources of every group.
func Resources(cfg registry.Config) []*registry.Resource {
	var out []*registry.Resource
	for _, g := range Groups() {
		out = append(out, g.Resources(cfg)...)
	}
	return out
}

// NewScheme returns a scheme with the types of every group.
func NewScheme() *runtime.Scheme {
	s := runtime.NewScheme()
	for _, g := range Groups() {
		utilruntime.Must(g.AddToScheme(s))
	}
	return s
}
