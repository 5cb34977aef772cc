package resource

import (
	"context"
	"slices"
	"testing"

	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	"github.com/orch/orch/server/registry"
)

func strategies() map[string]registry.Strategy {
	out := map[string]registry.Strategy{}
	for _, r := range resources(registry.Config{}) {
		out[r.Resource] = r.Strategy
	}
	return out
}

func claim(reqs ...resourcev1.DeviceRequest) *resourcev1.ResourceClaim {
	return &resourcev1.ResourceClaim{ObjectMeta: metav1.ObjectMeta{Name: "c", Namespace: "ns"},
		Spec: resourcev1.ResourceClaimSpec{Devices: resourcev1.DeviceClaim{Requests: reqs}}}
}

func exact(name, class string) resourcev1.DeviceRequest {
	return resourcev1.DeviceRequest{Name: name, Exactly: &resourcev1.ExactDeviceRequest{DeviceClassName: class}}
}

func slice(node *string) *resourcev1.ResourceSlice {
	return &resourcev1.ResourceSlice{ObjectMeta: metav1.ObjectMeta{Name: "s"}, Spec: resourcev1.ResourceSliceSpec{
		Driver: "dra.example.com", NodeName: node, Pool: resourcev1.ResourcePool{Name: "cluster", ResourceSliceCount: 1}}}
}

// errorPaths defaults obj (and old) and validates it as a create, an
// update (old set) or a status update.
func errorPaths(st registry.Strategy, obj, old runtime.Object, status bool) []string {
	ctx := context.Background()
	st.Default(obj)
	errs := st.Validate(ctx, obj)
	switch {
	case status:
		errs = st.ValidateStatusUpdate(ctx, obj, old)
	case old != nil:
		st.Default(old)
		errs = st.ValidateUpdate(ctx, obj, old)
	}
	var out []string
	for _, e := range errs {
		out = append(out, e.Field)
	}
	return out
}

func TestValidation(t *testing.T) {
	st := strategies()
	twoModes := exact("a", "gpu")
	twoModes.FirstAvailable = []resourcev1.DeviceSubRequest{{Name: "x", DeviceClassName: "gpu"}}
	allWithCount := exact("a", "gpu")
	allWithCount.Exactly.AllocationMode, allWithCount.Exactly.Count = resourcev1.DeviceAllocationModeAll, 2
	allocated := claim(exact("a", "gpu"))
	allocated.Status.Allocation = &resourcev1.AllocationResult{Devices: resourcev1.DeviceAllocationResult{
		Results: []resourcev1.DeviceRequestAllocationResult{{Request: "a", Driver: "dra.example.com", Pool: "p", Device: "d0"}}}}
	badResult := claim(exact("a", "gpu"))
	badResult.Status.Allocation = &resourcev1.AllocationResult{Devices: resourcev1.DeviceAllocationResult{
		Results: []resourcev1.DeviceRequestAllocationResult{{Request: "b", Driver: "dra.example.com", Pool: "p", Device: "d0"}}}}
	reservedOnly := claim(exact("a", "gpu"))
	reservedOnly.Status.ReservedFor = []resourcev1.ResourceClaimConsumerReference{{Resource: "pods", Name: "p", UID: "1"}}
	labelled := claim(exact("a", "gpu"))
	labelled.Labels = map[string]string{"x": "y"}
	twoNodes := slice(ptr.To("n1"))
	twoNodes.Spec.AllNodes = ptr.To(true)
	dupDevices := slice(ptr.To("n1"))
	dupDevices.Spec.Devices = []resourcev1.Device{{Name: "d"}, {Name: "d"}}
	badEffect := &resourcev1.DeviceTaintRule{ObjectMeta: metav1.ObjectMeta{Name: "r"},
		Spec: resourcev1.DeviceTaintRuleSpec{Taint: resourcev1.DeviceTaint{Key: "k", Effect: "Sometimes"}}}
	for _, c := range []struct {
		name, resource string
		obj, old       runtime.Object
		status         bool
		want           []string
	}{
		{"claim", "resourceclaims", claim(exact("a", "gpu")), nil, false, nil},
		{"no requests' mode", "resourceclaims", claim(resourcev1.DeviceRequest{Name: "a"}), nil, false, []string{"spec.devices.requests[0]"}},
		{"both modes", "resourceclaims", claim(twoModes), nil, false, []string{"spec.devices.requests[0]"}},
		{"duplicate request", "resourceclaims", claim(exact("a", "gpu"), exact("a", "gpu")), nil, false, []string{"spec.devices.requests[1].name"}},
		{"no class", "resourceclaims", claim(exact("a", "")), nil, false, []string{"spec.devices.requests[0].exactly.deviceClassName"}},
		{"All with a count", "resourceclaims", claim(allWithCount), nil, false, []string{"spec.devices.requests[0].exactly.count"}},
		{"spec immutable", "resourceclaims", claim(exact("b", "gpu")), claim(exact("a", "gpu")), false, []string{"spec"}},
		{"labels mutable", "resourceclaims", labelled, claim(exact("a", "gpu")), false, nil},
		{"allocation", "resourceclaims", allocated, claim(exact("a", "gpu")), true, nil},
		{"allocation of no request", "resourceclaims", badResult, claim(exact("a", "gpu")), true, []string{"status.allocation.devices.results[0].request"}},
		{"reserved, not allocated", "resourceclaims", reservedOnly, claim(exact("a", "gpu")), true, []string{"status.reservedFor"}},
		{"slice", "resourceslices", slice(ptr.To("n1")), nil, false, nil},
		{"slice without node", "resourceslices", slice(nil), nil, false, []string{"spec"}},
		{"slice with two node fields", "resourceslices", twoNodes, nil, false, []string{"spec"}},
		{"duplicate device", "resourceslices", dupDevices, nil, false, []string{"spec.devices[1].name"}},
		{"node immutable", "resourceslices", slice(ptr.To("n2")), slice(ptr.To("n1")), false, []string{"spec.nodeName"}},
		{"taint effect", "devicetaintrules", badEffect, nil, false, []string{"spec.taint.effect"}},
		{"class without expression", "deviceclasses", &resourcev1.DeviceClass{ObjectMeta: metav1.ObjectMeta{Name: "gpu"},
			Spec: resourcev1.DeviceClassSpec{Selectors: []resourcev1.DeviceSelector{{CEL: &resourcev1.CELDeviceSelector{}}}}},
			nil, false, []string{"spec.selectors[0].cel.expression"}},
	} {
		if got := errorPaths(st[c.resource], c.obj, c.old, c.status); !slices.Equal(got, c.want) {
			t.Errorf("%s: errors at %v, want %v", c.name, got, c.want)
		}
	}
}

func TestDefaultsAndFields(t *testing.T) {
	st := strategies()
	c := claim(exact("a", "gpu"))
	st["resourceclaims"].Default(c)
	if e := c.Spec.Devices.Requests[0].Exactly; e.AllocationMode != resourcev1.DeviceAllocationModeExactCount || e.Count != 1 {
		t.Errorf("request defaults: %+v", e)
	}
	r := &resourcev1.DeviceTaintRule{Spec: resourcev1.DeviceTaintRuleSpec{Taint: resourcev1.DeviceTaint{Key: "k", Effect: "None"}}}
	st["devicetaintrules"].Default(r)
	if r.Spec.Taint.TimeAdded == nil {
		t.Error("taint without timeAdded")
	}
	set := st["resourceslices"].Fields(slice(ptr.To("n1")))
	if set["spec.nodeName"] != "n1" || set["spec.driver"] != "dra.example.com" || set["spec.pool.name"] != "cluster" {
		t.Errorf("fields %v", set)
	}
}
