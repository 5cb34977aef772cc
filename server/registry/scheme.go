package registry

import (
	appsv1 "k8s.io/api/apps/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	batchv1 "k8s.io/api/batch/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	eventsv1 "k8s.io/api/events/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	storagev1 "k8s.io/api/storage/v1"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
)

// NewScheme returns a scheme with every served group version registered
// (including autoscaling/v1 Scale, policy/v1 Eviction and core/v1 Binding),
// the meta.k8s.io types (Table, PartialObjectMetadata, options, Status,
// WatchEvent) and the meta internal version used to decode list options.
func NewScheme() *runtime.Scheme {
	s := runtime.NewScheme()
	utilruntime.Must(addLegacyToScheme(s))
	return s
}

// addLegacyToScheme registers the types of this package's groups.
func addLegacyToScheme(s *runtime.Scheme) error {
	adders := []func(*runtime.Scheme) error{
		corev1.AddToScheme,
		appsv1.AddToScheme,
		authenticationv1.AddToScheme,
		authorizationv1.AddToScheme,
		autoscalingv1.AddToScheme,
		batchv1.AddToScheme,
		coordinationv1.AddToScheme,
		discoveryv1.AddToScheme,
		eventsv1.AddToScheme,
		networkingv1.AddToScheme,
		policyv1.AddToScheme,
		schedulingv1.AddToScheme,
		storagev1.AddToScheme,
		metav1.AddMetaToScheme,
		metainternalversion.AddToScheme,
	}
	for _, add := range adders {
		if err := add(s); err != nil {
			return err
		}
	}
	// Unversioned meta types (Status, APIGroupList...) and the options types in
	// the "v1" core version, as kube-apiserver's legacy scheme does.
	metav1.AddToGroupVersion(s, schema.GroupVersion{Version: "v1"})
	return nil
}
