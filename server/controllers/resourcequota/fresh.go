package resourcequota

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes"
)

// lowers reports whether used is below the quota's status.used for some
// name. Admission charges creates in the quota before the shared cache
// shows the new objects, so a recount from a cache that lags would give
// back room that is taken (and let the next create exceed the quota): a
// decrease is only written once a read from the API server confirms it.
func lowers(used, cur corev1.ResourceList) bool {
	for name, v := range used {
		if c, ok := cur[name]; ok && v.Cmp(c) < 0 {
			return true
		}
	}
	return false
}

// listFresh lists the objects of gr in ns from the API server (a read at
// least as new as the quota the caller holds), not the cache.
func listFresh(ctx context.Context, c kubernetes.Interface, gr schema.GroupResource, ns string) ([]runtime.Object, error) {
	o := metav1.ListOptions{}
	var list runtime.Object
	var err error
	switch gr {
	case schema.GroupResource{Resource: "pods"}:
		list, err = c.CoreV1().Pods(ns).List(ctx, o)
	case schema.GroupResource{Resource: "services"}:
		list, err = c.CoreV1().Services(ns).List(ctx, o)
	case schema.GroupResource{Resource: "configmaps"}:
		list, err = c.CoreV1().ConfigMaps(ns).List(ctx, o)
	case schema.GroupResource{Resource: "secrets"}:
		list, err = c.CoreV1().Secrets(ns).List(ctx, o)
	case schema.GroupResource{Resource: "persistentvolumeclaims"}:
		list, err = c.CoreV1().PersistentVolumeClaims(ns).List(ctx, o)
	case schema.GroupResource{Resource: "replicationcontrollers"}:
		list, err = c.CoreV1().ReplicationControllers(ns).List(ctx, o)
	case schema.GroupResource{Resource: "podtemplates"}:
		list, err = c.CoreV1().PodTemplates(ns).List(ctx, o)
	case schema.GroupResource{Resource: "resourcequotas"}:
		list, err = c.CoreV1().ResourceQuotas(ns).List(ctx, o)
	case schema.GroupResource{Group: "apps", Resource: "deployments"}:
		list, err = c.AppsV1().Deployments(ns).List(ctx, o)
	case schema.GroupResource{Group: "apps", Resource: "replicasets"}:
		list, err = c.AppsV1().ReplicaSets(ns).List(ctx, o)
	case schema.GroupResource{Group: "apps", Resource: "statefulsets"}:
		list, err = c.AppsV1().StatefulSets(ns).List(ctx, o)
	case schema.GroupResource{Group: "apps", Resource: "daemonsets"}:
		list, err = c.AppsV1().DaemonSets(ns).List(ctx, o)
	case schema.GroupResource{Group: "batch", Resource: "jobs"}:
		list, err = c.BatchV1().Jobs(ns).List(ctx, o)
	case schema.GroupResource{Group: "batch", Resource: "cronjobs"}:
		list, err = c.BatchV1().CronJobs(ns).List(ctx, o)
	default:
		return nil, fmt.Errorf("resourcequota: no fresh list for %v", gr)
	}
	if err != nil {
		return nil, err
	}
	return meta.ExtractList(list)
}
