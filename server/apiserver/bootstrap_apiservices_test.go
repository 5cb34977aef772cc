package apiserver

import (
	"context"
	"errors"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/orch/orch/datastore"
	"github.com/orch/orch/server/registry"
	"github.com/orch/orch/server/registry/apiregistration"
)

// TestBootstrapLocalAPIServicesFollowServedGroups: virtual groups get a
// Local APIService too; an onstart Local APIService of a group no longer
// served is removed, one with a service (a real metrics-server) is kept.
func TestBootstrapLocalAPIServicesFollowServedGroups(t *testing.T) {
	ctx := context.Background()
	metricsGV := schema.GroupVersion{Group: "metrics.k8s.io", Version: "v1beta1"}
	virtual := registry.Def{GroupVersion: schema.GroupVersion{Group: "example.orch.io", Version: "v1"}, Resource: "things", Kind: "Thing",
		New: registry.NewObjects[metav1.Status](), NewList: registry.NewObjects[metav1.Status]()}.Build()
	virtual.Verbs = []string{"get", "list"}
	s, store := newMetaTestServer(t, func(c *Config) { c.Virtual = []Virtual{{Resource: virtual}} })
	res := findResource(s.cfg.Resources, apiregistration.GroupName, "apiservices")
	stale := apiregistration.LocalAPIService(metricsGV, metav1.Now())
	if _, err := s.createIfAbsent(ctx, res, stale, nil); err != nil {
		t.Fatal(err)
	}
	withService := apiregistration.LocalAPIService(schema.GroupVersion{Group: "custom.metrics.k8s.io", Version: "v1beta2"}, metav1.Now())
	withService.Spec.Service = &apiregistration.ServiceReference{Namespace: "kube-system", Name: "adapter"}
	withService.Spec.InsecureSkipTLSVerify = true
	if _, err := s.createIfAbsent(ctx, res, withService, nil); err != nil {
		t.Fatal(err)
	}
	if err := s.Bootstrap(ctx); err != nil {
		t.Fatal(err)
	}
	var a apiregistration.APIService
	metaGetStored(t, s, apiregistration.GroupName, "apiservices", "", "v1.example.orch.io", &a)
	if a.Spec.Service != nil || a.Status.Conditions[0].Reason != "Local" {
		t.Errorf("virtual group's APIService = %+v", a)
	}
	if _, err := store.Get(ctx, res.Key("", "v1beta1.metrics.k8s.io")); !errors.Is(err, datastore.ErrNotFound) {
		t.Errorf("stale Local APIService: %v, want it deleted", err)
	}
	metaGetStored(t, s, apiregistration.GroupName, "apiservices", "", "v1beta2.custom.metrics.k8s.io", &a)
}
