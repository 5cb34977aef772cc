package integration

import (
	"testing"

	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/orch/orch/test/testutil"
)

func init() {
	register("ResourceAPI", testResourceAPI)
}

// testResourceAPI: resource.k8s.io/v1 is served. A ResourceClaim gets its
// request defaults, keeps its spec immutable and takes an allocation
// through its status only; ResourceSlices are listed by the spec.nodeName
// field selector; a DeviceTaintRule's status takes conditions.
func testResourceAPI(t *testing.T, s *testutil.Server) {
	ctx := ctxT(t)
	ns := newNamespace(t, s.Clientset)
	rc := s.Clientset.ResourceV1()
	c, err := rc.ResourceClaims(ns).Create(ctx, &resourcev1.ResourceClaim{ObjectMeta: metav1.ObjectMeta{Name: "c"},
		Spec: resourcev1.ResourceClaimSpec{Devices: resourcev1.DeviceClaim{Requests: []resourcev1.DeviceRequest{{Name: "req-0",
			Exactly: &resourcev1.ExactDeviceRequest{DeviceClassName: "dra.example.com"}}}}},
		Status: resourcev1.ResourceClaimStatus{Allocation: &resourcev1.AllocationResult{}}}, metav1.CreateOptions{})
	must(t, err, "create claim")
	if e := c.Spec.Devices.Requests[0].Exactly; e.Count != 1 || e.AllocationMode != resourcev1.DeviceAllocationModeExactCount || c.Status.Allocation != nil {
		t.Fatalf("created claim: %+v, status %+v", e, c.Status)
	}
	c.Spec.Devices.Requests[0].Name = "other"
	_, err = rc.ResourceClaims(ns).Update(ctx, c, metav1.UpdateOptions{})
	wantField(t, err, "spec")
	c.Spec.Devices.Requests[0].Name = "req-0"
	c.Status.Allocation = &resourcev1.AllocationResult{Devices: resourcev1.DeviceAllocationResult{Results: []resourcev1.DeviceRequestAllocationResult{
		{Request: "req-0", Driver: "dra.example.com", Pool: "p", Device: "d0"}}}}
	c, err = rc.ResourceClaims(ns).UpdateStatus(ctx, c, metav1.UpdateOptions{})
	must(t, err, "allocate claim")
	if len(c.Status.Allocation.Devices.Results) != 1 {
		t.Fatalf("allocation: %+v", c.Status.Allocation)
	}
	for _, node := range []string{"it-n1-" + ns, "it-n2-" + ns} {
		_, err = rc.ResourceSlices().Create(ctx, &resourcev1.ResourceSlice{ObjectMeta: metav1.ObjectMeta{Name: node},
			Spec: resourcev1.ResourceSliceSpec{Driver: "dra.example.com", NodeName: ptr.To(node),
				Pool: resourcev1.ResourcePool{Name: node, ResourceSliceCount: 1}}}, metav1.CreateOptions{})
		must(t, err, "create slice %s", node)
		t.Cleanup(func() { _ = rc.ResourceSlices().Delete(ctxT(t), node, metav1.DeleteOptions{}) })
	}
	list, err := rc.ResourceSlices().List(ctx, metav1.ListOptions{FieldSelector: "spec.nodeName=it-n2-" + ns})
	must(t, err, "list slices by node")
	if len(list.Items) != 1 || list.Items[0].Name != "it-n2-"+ns {
		t.Fatalf("slices of node 2: %v", list.Items)
	}
	testDeviceTaintRuleStatus(t, s, "it-rule-"+ns)
}

func testDeviceTaintRuleStatus(t *testing.T, s *testutil.Server, name string) {
	ctx := ctxT(t)
	rules := s.Clientset.ResourceV1().DeviceTaintRules()
	r, err := rules.Create(ctx, &resourcev1.DeviceTaintRule{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: resourcev1.DeviceTaintRuleSpec{Taint: resourcev1.DeviceTaint{Key: "testing", Effect: resourcev1.DeviceTaintEffectNone}}}, metav1.CreateOptions{})
	must(t, err, "create rule")
	t.Cleanup(func() { _ = rules.Delete(ctxT(t), name, metav1.DeleteOptions{}) })
	if r.Spec.Taint.TimeAdded == nil || r.Generation != 1 {
		t.Fatalf("created rule: %+v", r)
	}
	r.Status.Conditions = []metav1.Condition{{Type: "Testing", Status: metav1.ConditionTrue, Reason: "E2E", LastTransitionTime: metav1.Now()}}
	r, err = rules.UpdateStatus(ctx, r, metav1.UpdateOptions{})
	must(t, err, "rule status")
	if len(r.Status.Conditions) != 1 {
		t.Fatalf("rule status: %+v", r.Status)
	}
	r.Spec.Taint.Effect = "Sometimes"
	_, err = rules.Update(ctx, r, metav1.UpdateOptions{})
	wantField(t, err, "spec.taint.effect")
}
