package apiregistration

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// GroupName is the API group of this package.
const GroupName = "apiregistration.k8s.io"

// SchemeGroupVersion is apiregistration.k8s.io/v1.
var SchemeGroupVersion = schema.GroupVersion{Group: GroupName, Version: "v1"}

// AddToScheme registers the types of this package.
func AddToScheme(s *runtime.Scheme) error {
	s.AddKnownTypes(SchemeGroupVersion, &APIService{}, &APIServiceList{})
	metav1.AddToGroupVersion(s, SchemeGroupVersion)
	return nil
}

// ConditionStatus is True, False or Unknown.
type ConditionStatus string

// Condition statuses.
const (
	ConditionTrue    ConditionStatus = "True"
	ConditionFalse   ConditionStatus = "False"
	ConditionUnknown ConditionStatus = "Unknown"
)

// Available is the only APIService condition type.
const Available = "Available"

// ServiceReference names the Service of an aggregated API server.
type ServiceReference struct {
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name,omitempty"`
	Port      *int32 `json:"port,omitempty"`
}

// APIServiceSpec is the spec of an APIService.
type APIServiceSpec struct {
	Service               *ServiceReference `json:"service,omitempty"`
	Group                 string            `json:"group,omitempty"`
	Version               string            `json:"version,omitempty"`
	InsecureSkipTLSVerify bool              `json:"insecureSkipTLSVerify,omitempty"`
	CABundle              []byte            `json:"caBundle,omitempty"`
	GroupPriorityMinimum  int32             `json:"groupPriorityMinimum"`
	VersionPriority       int32             `json:"versionPriority"`
}

// APIServiceCondition is one condition of an APIService.
type APIServiceCondition struct {
	Type               string          `json:"type"`
	Status             ConditionStatus `json:"status"`
	LastTransitionTime metav1.Time     `json:"lastTransitionTime,omitempty"`
	Reason             string          `json:"reason,omitempty"`
	Message            string          `json:"message,omitempty"`
}

// APIServiceStatus is the status of an APIService.
type APIServiceStatus struct {
	Conditions []APIServiceCondition `json:"conditions,omitempty" patchStrategy:"merge" patchMergeKey:"type"`
}

// APIService registers a group/version of the API.
type APIService struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              APIServiceSpec   `json:"spec,omitempty"`
	Status            APIServiceStatus `json:"status,omitempty"`
}

// APIServiceList is a list of APIServices.
type APIServiceList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []APIService `json:"items"`
}

// DeepCopyInto copies in into out.
func (in *APIService) DeepCopyInto(out *APIService) {
	*out = *in
	out.TypeMeta = in.TypeMeta
	in.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	if in.Spec.Service != nil {
		s := *in.Spec.Service
		if s.Port != nil {
			p := *s.Port
			s.Port = &p
		}
		out.Spec.Service = &s
	}
	if in.Spec.CABundle != nil {
		out.Spec.CABundle = append([]byte(nil), in.Spec.CABundle...)
	}
	if in.Status.Conditions != nil {
		out.Status.Conditions = make([]APIServiceCondition, len(in.Status.Conditions))
		for i := range in.Status.Conditions {
			c := in.Status.Conditions[i]
			c.LastTransitionTime = *in.Status.Conditions[i].LastTransitionTime.DeepCopy()
			out.Status.Conditions[i] = c
		}
	}
}

// DeepCopy returns a copy of in.
func (in *APIService) DeepCopy() *APIService {
	if in == nil {
		return nil
	}
	out := new(APIService)
	in.DeepCopyInto(out)
	return out
}

// DeepCopyObject implements runtime.Object.
func (in *APIService) DeepCopyObject() runtime.Object { return in.DeepCopy() }

// DeepCopy returns a copy of in.
func (in *APIServiceList) DeepCopy() *APIServiceList {
	if in == nil {
		return nil
	}
	out := &APIServiceList{TypeMeta: in.TypeMeta}
	in.ListMeta.DeepCopyInto(&out.ListMeta)
	if in.Items != nil {
		out.Items = make([]APIService, len(in.Items))
		for i := range in.Items {
			in.Items[i].DeepCopyInto(&out.Items[i])
		}
	}
	return out
}

// DeepCopyObject implements runtime.Object.
func (in *APIServiceList) DeepCopyObject() runtime.Object { return in.DeepCopy() }
