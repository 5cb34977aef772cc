package apiregistration_test

import (
	"context"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/orch/orch/server/apiserver/apiservertest"
)

var gvr = schema.GroupVersionResource{Group: "apiregistration.k8s.io", Version: "v1", Resource: "apiservices"}

func apiService(name, group, version string, gpm int64) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]interface{}{
		"apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService",
		"metadata": map[string]interface{}{"name": name},
		"spec": map[string]interface{}{"group": group, "version": version,
			"groupPriorityMinimum": gpm, "versionPriority": int64(100), "insecureSkipTLSVerify": true,
			"service": map[string]interface{}{"namespace": "kube-system", "name": "metrics-server", "port": int64(443)}},
	}}
}

func TestAPIServiceCRUD(t *testing.T) {
	_, cfg := apiservertest.Start(t)
	dc, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	c := dc.Resource(gvr)
	if _, err := c.Create(ctx, apiService("v1beta1.metrics.k8s.io", "metrics.k8s.io", "v1beta1", 100), metav1.CreateOptions{}); err != nil {
		t.Fatalf("create: %v", err)
	}
	got, err := c.Get(ctx, "v1beta1.metrics.k8s.io", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if p, _, _ := unstructured.NestedInt64(got.Object, "spec", "service", "port"); p != 443 {
		t.Fatalf("port round trip: %v", got.Object)
	}
	_, err = c.Create(ctx, apiService("v1.wrong.io", "metrics.k8s.io", "v1beta1", 0), metav1.CreateOptions{})
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "groupPriorityMinimum") || !strings.Contains(err.Error(), "metadata.name") {
		t.Fatalf("want Invalid naming fields, got %v", err)
	}
	if _, err := c.Get(ctx, "v1.wrong.io", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("invalid object stored: %v", err)
	}
	list, err := c.List(ctx, metav1.ListOptions{})
	if err != nil || len(list.Items) != 1 {
		t.Fatalf("list: %v %v", list, err)
	}
}
