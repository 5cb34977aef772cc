package apiserver

import (
	"context"
	"encoding/json"
	"net"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"

	"github.com/orch/orch/datastore"
	"github.com/orch/orch/server/registry"
)

func metaGetStored(t *testing.T, s *Server, group, resource, ns, name string, into any) *datastore.KV {
	t.Helper()
	res := findResource(s.cfg.Resources, group, resource)
	kv, err := s.cfg.Store.Get(context.Background(), res.Key(ns, name))
	if err != nil {
		t.Fatalf("%s %s/%s: %v", resource, ns, name, err)
	}
	if err := json.Unmarshal(kv.Value, into); err != nil {
		t.Fatal(err)
	}
	return kv
}

func TestBootstrap(t *testing.T) {
	ctx := context.Background()
	s, store := newMetaTestServer(t, nil)
	if err := s.Bootstrap(ctx); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"default", "kube-system", "kube-public", "kube-node-lease"} {
		var ns corev1.Namespace
		metaGetStored(t, s, "", "namespaces", "", name, &ns)
		if ns.Status.Phase != corev1.NamespaceActive || ns.Labels[corev1.LabelMetadataName] != name ||
			!slices.Equal(ns.Spec.Finalizers, []corev1.FinalizerName{corev1.FinalizerKubernetes}) || ns.UID == "" {
			t.Errorf("namespace %s = %+v", name, ns)
		}
	}
	var svc corev1.Service
	metaGetStored(t, s, "", "services", "default", "kubernetes", &svc)
	if svc.Spec.ClusterIP != "10.43.0.1" || len(svc.Spec.Ports) != 1 || svc.Spec.Ports[0].Port != 443 ||
		svc.Spec.Ports[0].TargetPort.IntValue() != 6443 || svc.Labels["provider"] != "kubernetes" ||
		svc.Labels["component"] != "apiserver" {
		t.Errorf("kubernetes Service = %+v", svc)
	}
	var ep corev1.Endpoints
	metaGetStored(t, s, "", "endpoints", "default", "kubernetes", &ep)
	if len(ep.Subsets) != 1 || ep.Subsets[0].Addresses[0].IP != "10.0.0.5" || ep.Subsets[0].Ports[0].Port != 6443 {
		t.Errorf("kubernetes Endpoints = %+v", ep)
	}
	var slice discoveryv1.EndpointSlice
	metaGetStored(t, s, discoveryv1.GroupName, "endpointslices", "default", "kubernetes", &slice)
	if slice.Labels[discoveryv1.LabelServiceName] != "kubernetes" || slice.Endpoints[0].Addresses[0] != "10.0.0.5" ||
		*slice.Ports[0].Port != 6443 || slice.AddressType != discoveryv1.AddressTypeIPv4 {
		t.Errorf("kubernetes EndpointSlice = %+v", slice)
	}

	if _, err := store.Get(ctx, registry.ServiceIPsPrefix+"10.43.0.1"); err != nil {
		t.Errorf("ClusterIP 10.43.0.1 not reserved: %v", err)
	}

	// Idempotent: a second run writes nothing.
	rev := store.Revision()
	if err := s.Bootstrap(ctx); err != nil {
		t.Fatal(err)
	}
	if store.Revision() != rev {
		t.Errorf("second Bootstrap wrote: revision %d -> %d", rev, store.Revision())
	}
}

func TestBootstrapAddressChange(t *testing.T) {
	ctx := context.Background()
	s, store := newMetaTestServer(t, nil)
	if err := s.Bootstrap(ctx); err != nil {
		t.Fatal(err)
	}
	// Same store, new address and port, as after a restart on a new IP.
	s2, err := New(func() Config { c := s.cfg; c.AdvertiseAddress = net.ParseIP("10.0.0.9"); c.SecurePort = 7443; return c }())
	if err != nil {
		t.Fatal(err)
	}
	if err := s2.Bootstrap(ctx); err != nil {
		t.Fatal(err)
	}
	var ep corev1.Endpoints
	metaGetStored(t, s2, "", "endpoints", "default", "kubernetes", &ep)
	if ep.Subsets[0].Addresses[0].IP != "10.0.0.9" || ep.Subsets[0].Ports[0].Port != 7443 {
		t.Errorf("endpoints not updated: %+v", ep.Subsets)
	}
	var slice discoveryv1.EndpointSlice
	metaGetStored(t, s2, discoveryv1.GroupName, "endpointslices", "default", "kubernetes", &slice)
	if slice.Endpoints[0].Addresses[0] != "10.0.0.9" || *slice.Ports[0].Port != 7443 {
		t.Errorf("endpointslice not updated: %+v", slice)
	}
	var svc corev1.Service
	metaGetStored(t, s2, "", "services", "default", "kubernetes", &svc)
	if svc.Spec.Ports[0].TargetPort.IntValue() != 7443 {
		t.Errorf("service targetPort not updated: %+v", svc.Spec.Ports)
	}
	_ = store
}

func TestFirstIP(t *testing.T) {
	for cidr, want := range map[string]string{
		"10.43.0.0/16": "10.43.0.1", "10.43.7.9/16": "10.43.0.1", "192.168.1.0/24": "192.168.1.1", "fd00::/108": "fd00::1",
	} {
		_, n, _ := net.ParseCIDR(cidr)
		if got := firstIP(n).String(); got != want {
			t.Errorf("firstIP(%s) = %s, want %s", cidr, got, want)
		}
	}
}
