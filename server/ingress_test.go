package server

import (
	"context"
	"testing"

	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
)

func TestBuiltinIngressDisable(t *testing.T) {
	list := []sharedController{{name: "deployment"}, {name: "ingress"}}
	if got := builtinIngress(list, nil); len(got) != 2 || got[1].name != "ingress" {
		t.Fatalf("enabled: %+v", got)
	}
	got := builtinIngress(list, []string{"traefik", DisableIngress})
	if len(got) != 1 || got[0].name != "deployment" || len(list) != 2 {
		t.Fatalf("disabled: %+v (input now %+v)", got, list)
	}
}

func TestIngressClassStep(t *testing.T) {
	ctx := context.Background()
	cs := fake.NewClientset()
	for range 2 { // idempotent
		if err := ingressClassStep(nil, cs)(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := cs.NetworkingV1().IngressClasses().Get(ctx, "orch", metav1.GetOptions{}); err != nil {
		t.Fatalf("IngressClass orch not created: %v", err)
	}
	if err := ingressClassStep([]string{DisableIngress}, cs)(ctx); err != nil {
		t.Fatal(err)
	}
	if l, _ := cs.NetworkingV1().IngressClasses().List(ctx, metav1.ListOptions{}); len(l.Items) != 0 {
		t.Fatalf("IngressClasses left: %v", l.Items)
	}
	// Another controller's class of the same name is left alone.
	other := &networkingv1.IngressClass{ObjectMeta: metav1.ObjectMeta{Name: "orch"}, Spec: networkingv1.IngressClassSpec{Controller: "example.com/x"}}
	if _, err := cs.NetworkingV1().IngressClasses().Create(ctx, other, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := ingressClassStep([]string{DisableIngress}, cs)(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.NetworkingV1().IngressClasses().Get(ctx, "orch", metav1.GetOptions{}); err != nil {
		t.Fatalf("another controller's IngressClass orch was deleted: %v", err)
	}
}
