package apiregistration

import (
	"strings"
	"testing"
)

func valid() *APIService {
	a := &APIService{}
	a.Name = "v1beta1.metrics.k8s.io"
	a.Spec = APIServiceSpec{Group: "metrics.k8s.io", Version: "v1beta1", GroupPriorityMinimum: 100, VersionPriority: 100,
		Service: &ServiceReference{Namespace: "kube-system", Name: "metrics-server"}, InsecureSkipTLSVerify: true}
	return a
}

func TestValidate(t *testing.T) {
	port := int32(70000)
	tests := []struct {
		name   string
		mutate func(*APIService)
		field  string // "" = valid
	}{
		{"valid", func(*APIService) {}, ""},
		{"local core", func(a *APIService) {
			a.Name, a.Spec = "v1.", APIServiceSpec{Version: "v1", GroupPriorityMinimum: 18000, VersionPriority: 1}
		}, ""},
		{"name mismatch", func(a *APIService) { a.Name = "v1.metrics.k8s.io" }, "metadata.name"},
		{"empty group not v1", func(a *APIService) { a.Name, a.Spec.Group = "v1beta1.", "" }, "spec.group"},
		{"bad version", func(a *APIService) { a.Name, a.Spec.Version = "V1.metrics.k8s.io", "V1" }, "spec.version"},
		{"group priority", func(a *APIService) { a.Spec.GroupPriorityMinimum = 0 }, "spec.groupPriorityMinimum"},
		{"version priority", func(a *APIService) { a.Spec.VersionPriority = 1001 }, "spec.versionPriority"},
		{"both tls modes", func(a *APIService) { a.Spec.CABundle = []byte("x") }, "spec.insecureSkipTLSVerify"},
		{"service namespace", func(a *APIService) { a.Spec.Service.Namespace = "" }, "spec.service.namespace"},
		{"service port", func(a *APIService) { a.Spec.Service.Port = &port }, "spec.service.port"},
		{"local with caBundle", func(a *APIService) {
			a.Spec.Service, a.Spec.InsecureSkipTLSVerify, a.Spec.CABundle = nil, false, []byte("x")
		}, "spec.caBundle"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a := valid()
			tc.mutate(a)
			errs := Validate(a)
			if tc.field == "" {
				if len(errs) != 0 {
					t.Fatalf("unexpected errors: %v", errs)
				}
				return
			}
			if len(errs) == 0 || !strings.Contains(errs.ToAggregate().Error(), tc.field) {
				t.Fatalf("want error on %s, got %v", tc.field, errs)
			}
		})
	}
}

func TestCells(t *testing.T) {
	a := valid()
	if got := ServiceCell(a); got != "kube-system/metrics-server" {
		t.Fatalf("service cell %q", got)
	}
	if got := AvailableCell(a); got != "Unknown" {
		t.Fatalf("available cell %q", got)
	}
	a.Status.Conditions = []APIServiceCondition{{Type: Available, Status: ConditionFalse, Reason: "MissingEndpoints"}}
	if got := AvailableCell(a); got != "False (MissingEndpoints)" {
		t.Fatalf("available cell %q", got)
	}
	a.Spec.Service = nil
	if got := ServiceCell(a); got != "Local" {
		t.Fatalf("service cell %q", got)
	}
}
