package servicecidr

import (
	"context"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/orch/orch/server/controllers/kit/kittest"
)

func ready(client kubernetes.Interface, name string) string {
	sc, err := client.NetworkingV1().ServiceCIDRs().Get(context.Background(), name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return "gone"
	}
	if err != nil {
		return err.Error()
	}
	c := meta.FindStatusCondition(sc.Status.Conditions, networkingv1.ServiceCIDRConditionReady)
	if c == nil || !slices.Contains(sc.Finalizers, Finalizer) {
		return "pending"
	}
	return string(c.Status) + "/" + c.Reason
}

func ipParent(client kubernetes.Interface, ip string) string {
	obj, err := client.NetworkingV1().IPAddresses().Get(context.Background(), ip, metav1.GetOptions{})
	if err != nil || obj.Spec.ParentRef == nil {
		return "none"
	}
	return obj.Spec.ParentRef.Resource + "/" + obj.Spec.ParentRef.Namespace + "/" + obj.Spec.ParentRef.Name +
		" " + obj.Labels[networkingv1.LabelManagedBy] + " " + obj.Labels[networkingv1.LabelIPAddressFamily]
}

// TestServiceCIDRLifecycle: a ServiceCIDR becomes Ready with the
// finalizer; its deletion waits while a ClusterIP lies only in it.
func TestServiceCIDRLifecycle(t *testing.T) {
	client, _ := kittest.Run(t, New, kittest.Also(NewIPAddresses))
	ctx := context.Background()
	sc := &networkingv1.ServiceCIDR{ObjectMeta: metav1.ObjectMeta{Name: "extra"}, Spec: networkingv1.ServiceCIDRSpec{CIDRs: []string{"10.43.0.0/24"}}}
	if _, err := client.NetworkingV1().ServiceCIDRs().Create(ctx, sc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	kittest.Until(t, "Ready", func() bool { return ready(client, "extra") == "True/" })

	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"},
		Spec: corev1.ServiceSpec{ClusterIP: "10.43.0.20", Ports: []corev1.ServicePort{{Port: 80}}}}
	if _, err := client.CoreV1().Services("default").Create(ctx, svc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	kittest.Until(t, "the ClusterIP's IPAddress", func() bool {
		return ipParent(client, "10.43.0.20") == "services/default/web ipallocator.k8s.io IPv4"
	})
	if err := client.NetworkingV1().ServiceCIDRs().Delete(ctx, "extra", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	kittest.Until(t, "deletion blocked", func() bool { return ready(client, "extra") == "False/"+networkingv1.ServiceCIDRReasonTerminating })
	if err := client.CoreV1().Services("default").Delete(ctx, "web", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	kittest.Until(t, "IPAddress released", func() bool { return ipParent(client, "10.43.0.20") == "none" })
	kittest.Until(t, "ServiceCIDR deleted", func() bool { return ready(client, "extra") == "gone" })
}

// TestIPAddressMirror: a stale mirror of another Service is replaced, an
// IPAddress someone else made is left alone.
func TestIPAddressMirror(t *testing.T) {
	client, _ := kittest.Run(t, NewIPAddresses)
	ctx := context.Background()
	mk := func(ip, svc, managedBy string) {
		obj := &networkingv1.IPAddress{ObjectMeta: metav1.ObjectMeta{Name: ip, Labels: map[string]string{}},
			Spec: networkingv1.IPAddressSpec{ParentRef: &networkingv1.ParentReference{Resource: "services", Namespace: "default", Name: svc}}}
		if managedBy != "" {
			obj.Labels[networkingv1.LabelManagedBy] = managedBy
		}
		if _, err := client.NetworkingV1().IPAddresses().Create(ctx, obj, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	mk("10.43.0.30", "old", ManagedBy)
	mk("10.43.0.31", "gone", ManagedBy)
	mk("10.43.0.32", "theirs", "")
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "new", Namespace: "default"},
		Spec: corev1.ServiceSpec{ClusterIP: "10.43.0.30", Ports: []corev1.ServicePort{{Port: 80}}}}
	if _, err := client.CoreV1().Services("default").Create(ctx, svc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	kittest.Until(t, "mirror replaced", func() bool { return ipParent(client, "10.43.0.30") == "services/default/new ipallocator.k8s.io IPv4" })
	kittest.Until(t, "orphan mirror removed", func() bool { return ipParent(client, "10.43.0.31") == "none" })
	if got := ipParent(client, "10.43.0.32"); got != "services/default/theirs  " {
		t.Errorf("foreign IPAddress = %q", got)
	}
}
