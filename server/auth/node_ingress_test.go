package auth

import (
	"context"
	"testing"

	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	networkinglisters "k8s.io/client-go/listers/networking/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"
)

func TestNodeReadsIngressTLSSecrets(t *testing.T) {
	ings := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	for _, ing := range []*networkingv1.Ingress{
		{ObjectMeta: metav1.ObjectMeta{Name: "ours", Namespace: "web"},
			Spec: networkingv1.IngressSpec{IngressClassName: ptr.To(IngressClass), TLS: []networkingv1.IngressTLS{{SecretName: "ours-tls"}}}},
		{ObjectMeta: metav1.ObjectMeta{Name: "unset", Namespace: "web"},
			Spec: networkingv1.IngressSpec{TLS: []networkingv1.IngressTLS{{SecretName: "unset-tls"}}}},
		{ObjectMeta: metav1.ObjectMeta{Name: "theirs", Namespace: "web"},
			Spec: networkingv1.IngressSpec{IngressClassName: ptr.To("nginx"), TLS: []networkingv1.IngressTLS{{SecretName: "nginx-tls"}}}},
	} {
		if err := ings.Add(ing); err != nil {
			t.Fatal(err)
		}
	}
	g := NewPodListerGraph(corelisters.NewPodLister(cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})), nil)
	g.ingresses = networkinglisters.NewIngressLister(ings)
	for _, tc := range []struct {
		ns, name string
		want     bool
	}{{"web", "ours-tls", true}, {"web", "unset-tls", true}, {"web", "nginx-tls", false}, {"other", "ours-tls", false}} {
		if got, err := g.References(context.Background(), "n1", "secrets", tc.ns, tc.name); err != nil || got != tc.want {
			t.Errorf("secret %s/%s: %v %v, want %v", tc.ns, tc.name, got, err, tc.want)
		}
	}
	if got, _ := g.References(context.Background(), "n1", "configmaps", "web", "ours-tls"); got {
		t.Error("a configmap named like an Ingress TLS Secret is readable")
	}
	rule := NodeRule(g)
	for _, tc := range []struct {
		a    Attributes
		want Decision
	}{
		{res("list", "networking.k8s.io", "ingresses", "", "", ""), Allow},
		{res("watch", "networking.k8s.io", "ingressclasses", "", "", ""), Allow},
		{res("update", "networking.k8s.io", "ingresses", "status", "web", "ours"), Deny},
		{res("watch", "", "secrets", "", "web", "ours-tls"), Allow},
		{res("get", "", "secrets", "", "web", "nginx-tls"), Deny},
		{res("list", "", "secrets", "", "web", ""), Deny},
	} {
		if d, reason, err := rule(context.Background(), tc.a); d != tc.want || err != nil {
			t.Errorf("%s %s %s/%s: %v (%s) %v, want %v", tc.a.Verb, tc.a.Resource, tc.a.Namespace, tc.a.Name, d, reason, err, tc.want)
		}
	}
}
