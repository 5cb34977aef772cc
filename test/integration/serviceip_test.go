package integration

import (
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/orch/orch/test/testutil"
)

func init() {
	register("ServiceCIDRAndIPAddress", testServiceCIDRAndIPAddress)
}

// testServiceCIDRAndIPAddress: the default ServiceCIDR describes
// --service-cidr; ServiceCIDR and IPAddress validation; every ClusterIP
// gets an IPAddress and an IPAddress someone created keeps the allocator
// off its address.
func testServiceCIDRAndIPAddress(t *testing.T, s *testutil.Server) {
	ctx := ctxT(t)
	net := s.Clientset.NetworkingV1()
	def, err := net.ServiceCIDRs().Get(ctx, "kubernetes", metav1.GetOptions{})
	must(t, err, "get the default ServiceCIDR")
	if len(def.Spec.CIDRs) != 1 || !meta.IsStatusConditionTrue(def.Status.Conditions, networkingv1.ServiceCIDRConditionReady) {
		t.Fatalf("default ServiceCIDR %+v %+v", def.Spec, def.Status)
	}
	st, err := s.Clientset.CoreV1().RESTClient().Get().AbsPath("/apis/networking.k8s.io/v1/servicecidrs/kubernetes/status").DoRaw(ctx)
	must(t, err, "get status")
	if !strings.Contains(string(st), `"kind":"ServiceCIDR"`) {
		t.Fatalf("status: %s", st)
	}
	ns := newNamespace(t, s.Clientset)
	_, err = net.ServiceCIDRs().Create(ctx, &networkingv1.ServiceCIDR{ObjectMeta: metav1.ObjectMeta{Name: "it-" + ns},
		Spec: networkingv1.ServiceCIDRSpec{CIDRs: []string{"10.0.0.0/8", "192.168.0.0/16"}}}, metav1.CreateOptions{})
	wantField(t, err, "spec.cidrs")
	def.Spec.CIDRs = []string{"10.99.0.0/16"}
	_, err = net.ServiceCIDRs().Update(ctx, def, metav1.UpdateOptions{})
	wantField(t, err, "spec.cidrs[0]")

	ip := &networkingv1.IPAddress{ObjectMeta: metav1.ObjectMeta{Name: "fe80:0::1"}, Spec: networkingv1.IPAddressSpec{
		ParentRef: &networkingv1.ParentReference{Group: "example.com", Resource: "things", Name: "a"}}}
	_, err = net.IPAddresses().Create(ctx, ip, metav1.CreateOptions{})
	wantField(t, err, "metadata.name")
	testIPAddressesOfServices(t, s, ns)
}

func testIPAddressesOfServices(t *testing.T, s *testutil.Server, ns string) {
	ctx := ctxT(t)
	net := s.Clientset.NetworkingV1()
	svcs := s.Clientset.CoreV1().Services(ns)
	svc, err := svcs.Create(ctx, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}}}, metav1.CreateOptions{})
	must(t, err, "create Service")
	var mirror *networkingv1.IPAddress
	waitFor(t, "the ClusterIP's IPAddress", func() error {
		var err error
		if mirror, err = net.IPAddresses().Get(ctx, svc.Spec.ClusterIP, metav1.GetOptions{}); err != nil {
			return err
		}
		if r := mirror.Spec.ParentRef; r == nil || r.Resource != "services" || r.Namespace != ns || r.Name != "web" ||
			mirror.Labels[networkingv1.LabelManagedBy] != "ipallocator.k8s.io" {
			return fmt.Errorf("IPAddress %+v", mirror)
		}
		return nil
	})
	_, err = net.IPAddresses().Patch(ctx, mirror.Name, types.MergePatchType, []byte(`{"spec":{"parentRef":{"name":"other"}}}`), metav1.PatchOptions{})
	wantField(t, err, "spec.parentRef")
	must(t, svcs.Delete(ctx, "web", metav1.DeleteOptions{}), "delete Service")
	waitFor(t, "the IPAddress to go", func() error {
		if _, err := net.IPAddresses().Get(ctx, svc.Spec.ClusterIP, metav1.GetOptions{}); err == nil {
			return fmt.Errorf("%s still there", svc.Spec.ClusterIP)
		}
		return nil
	})
	// Someone else claims the address: an explicit request for it fails.
	claim := &networkingv1.IPAddress{ObjectMeta: metav1.ObjectMeta{Name: svc.Spec.ClusterIP}, Spec: networkingv1.IPAddressSpec{
		ParentRef: &networkingv1.ParentReference{Group: "example.com", Resource: "gateways", Namespace: ns, Name: "gw"}}}
	_, err = net.IPAddresses().Create(ctx, claim, metav1.CreateOptions{})
	must(t, err, "create IPAddress")
	t.Cleanup(func() { _ = net.IPAddresses().Delete(ctxT(t), claim.Name, metav1.DeleteOptions{}) })
	_, err = svcs.Create(ctx, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "again"},
		Spec: corev1.ServiceSpec{ClusterIP: svc.Spec.ClusterIP, Ports: []corev1.ServicePort{{Port: 80}}}}, metav1.CreateOptions{})
	if st := wantCode(t, err, 422, "a claimed ClusterIP"); !strings.Contains(st.Message, "provided IP is already allocated") {
		t.Fatalf("message %q", st.Message)
	}
}
