package apiregistration

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	apiregv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
)

// GroupName is the API group of this package.
const GroupName = "apiregistration.k8s.io"

// SchemeGroupVersion is apiregistration.k8s.io/v1.
var SchemeGroupVersion = schema.GroupVersion{Group: GroupName, Version: "v1"}

// AddToScheme registers the types of this package. They are upstream's
// (k8s.io/kube-aggregator), so APIServices travel as JSON, CBOR and protobuf,
// as the aggregator's clientset sends them.
func AddToScheme(s *runtime.Scheme) error {
	s.AddKnownTypes(SchemeGroupVersion, &APIService{}, &APIServiceList{})
	metav1.AddToGroupVersion(s, SchemeGroupVersion)
	return nil
}

// The apiregistration.k8s.io/v1 types.
type (
	// ConditionStatus is True, False or Unknown.
	ConditionStatus = apiregv1.ConditionStatus
	// ServiceReference names the Service of an aggregated API server.
	ServiceReference = apiregv1.ServiceReference
	// APIServiceSpec is the spec of an APIService.
	APIServiceSpec = apiregv1.APIServiceSpec
	// APIServiceCondition is one condition of an APIService.
	APIServiceCondition = apiregv1.APIServiceCondition
	// APIServiceStatus is the status of an APIService.
	APIServiceStatus = apiregv1.APIServiceStatus
	// APIService registers a group/version of the API.
	APIService = apiregv1.APIService
	// APIServiceList is a list of APIServices.
	APIServiceList = apiregv1.APIServiceList
)

// Condition statuses.
const (
	ConditionTrue    = apiregv1.ConditionTrue
	ConditionFalse   = apiregv1.ConditionFalse
	ConditionUnknown = apiregv1.ConditionUnknown
)

// Available is the only APIService condition type.
const Available = apiregv1.Available
