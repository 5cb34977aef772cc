package apiserver

import (
	"context"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	apiregv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
	aggregatorclient "k8s.io/kube-aggregator/pkg/client/clientset_generated/clientset"
)

// TestAPIServiceProtobuf drives APIServices with the aggregator's own
// clientset speaking protobuf, as the conformance suite's client does:
// create, read, list by label, status update and delete all round-trip.
func TestAPIServiceProtobuf(t *testing.T) {
	s, _ := newMetaTestServer(t, nil)
	ac, err := aggregatorclient.NewForConfig(protobufConfig(s.LoopbackTransport()))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	if err := s.Bootstrap(ctx); err != nil {
		t.Fatal(err)
	}
	port := int32(7443)
	api := ac.ApiregistrationV1().APIServices()
	a, err := api.Create(ctx, &apiregv1.APIService{
		ObjectMeta: metav1.ObjectMeta{Name: "v1alpha1.wardle.example.com", Labels: map[string]string{"e2e": "x"}},
		Spec: apiregv1.APIServiceSpec{Group: "wardle.example.com", Version: "v1alpha1", CABundle: []byte("ca"),
			GroupPriorityMinimum: 2000, VersionPriority: 200,
			Service: &apiregv1.ServiceReference{Namespace: "ns", Name: "sample-api", Port: &port}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if a.UID == "" || a.Spec.Service == nil || *a.Spec.Service.Port != 7443 || string(a.Spec.CABundle) != "ca" {
		t.Fatalf("created: %+v", a)
	}
	l, err := api.List(ctx, metav1.ListOptions{LabelSelector: "e2e=x"})
	if err != nil || len(l.Items) != 1 || l.Items[0].Spec.GroupPriorityMinimum != 2000 {
		t.Fatalf("list: %v %+v", err, l)
	}
	a.Status.Conditions = []apiregv1.APIServiceCondition{{Type: apiregv1.Available, Status: apiregv1.ConditionFalse,
		Reason: "E2E", Message: "set by the test", LastTransitionTime: metav1.Now()}}
	if a, err = api.UpdateStatus(ctx, a, metav1.UpdateOptions{}); err != nil || len(a.Status.Conditions) != 1 {
		t.Fatalf("status: %v %+v", err, a)
	}
	if err := api.Delete(ctx, a.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
}
