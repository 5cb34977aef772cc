package registry

import (
	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// The scale subresources (autoscaling/v1 Scale) of deployments, replicasets and statefulsets.

var deploymentScale = &ScaleAccess{
	Get: func(obj runtime.Object) (int32, int32, string) {
		d := obj.(*appsv1.Deployment)
		return replicasOr1(d.Spec.Replicas), d.Status.Replicas, selectorString(d.Spec.Selector)
	},
	Set: func(obj runtime.Object, n int32) { obj.(*appsv1.Deployment).Spec.Replicas = &n },
}

var replicaSetScale = &ScaleAccess{
	Get: func(obj runtime.Object) (int32, int32, string) {
		d := obj.(*appsv1.ReplicaSet)
		return replicasOr1(d.Spec.Replicas), d.Status.Replicas, selectorString(d.Spec.Selector)
	},
	Set: func(obj runtime.Object, n int32) { obj.(*appsv1.ReplicaSet).Spec.Replicas = &n },
}

var statefulSetScale = &ScaleAccess{
	Get: func(obj runtime.Object) (int32, int32, string) {
		d := obj.(*appsv1.StatefulSet)
		return replicasOr1(d.Spec.Replicas), d.Status.Replicas, selectorString(d.Spec.Selector)
	},
	Set: func(obj runtime.Object, n int32) { obj.(*appsv1.StatefulSet).Spec.Replicas = &n },
}
