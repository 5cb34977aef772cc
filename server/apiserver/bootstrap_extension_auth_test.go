package apiserver

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/orch/orch/server/registry/apiregistration"
)

func TestBootstrapExtensionAuthConfigMap(t *testing.T) {
	ctx := context.Background()
	ea := &ExtensionAuth{ClientCA: []byte("cluster-ca"), RequestHeader: []byte("front-proxy-ca")}
	s, _ := newMetaTestServer(t, func(c *Config) { c.ExtensionAuth = ea })
	if err := s.Bootstrap(ctx); err != nil {
		t.Fatal(err)
	}
	var cm corev1.ConfigMap
	metaGetStored(t, s, "", "configmaps", "kube-system", ExtensionAuthConfigMapName, &cm)
	want := map[string]string{
		"client-ca-file":                     "cluster-ca",
		"requestheader-client-ca-file":       "front-proxy-ca",
		"requestheader-allowed-names":        `["front-proxy-client"]`,
		"requestheader-username-headers":     `["X-Remote-User"]`,
		"requestheader-group-headers":        `["X-Remote-Group"]`,
		"requestheader-extra-headers-prefix": `["X-Remote-Extra-"]`,
	}
	for k, v := range want {
		if cm.Data[k] != v {
			t.Errorf("%s = %q, want %q", k, cm.Data[k], v)
		}
	}
	// A rotated front-proxy CA is written back on the next bootstrap.
	ea.RequestHeader = []byte("new-front-proxy-ca")
	if err := s.Bootstrap(ctx); err != nil {
		t.Fatal(err)
	}
	metaGetStored(t, s, "", "configmaps", "kube-system", ExtensionAuthConfigMapName, &cm)
	if cm.Data["requestheader-client-ca-file"] != "new-front-proxy-ca" {
		t.Errorf("ConfigMap not updated: %v", cm.Data)
	}
}

func TestBootstrapLocalAPIServices(t *testing.T) {
	s, _ := newMetaTestServer(t, nil)
	if err := s.Bootstrap(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"v1.", "v1.apps", "v1.apiregistration.k8s.io"} {
		var a apiregistration.APIService
		metaGetStored(t, s, apiregistration.GroupName, "apiservices", "", name, &a)
		if a.Spec.Service != nil || apiregistration.AvailableCell(&a) != "True" || a.Status.Conditions[0].Reason != "Local" {
			t.Errorf("%s = %+v", name, a)
		}
	}
	if err := s.Bootstrap(context.Background()); err != nil {
		t.Fatalf("second bootstrap: %v", err)
	}
}
