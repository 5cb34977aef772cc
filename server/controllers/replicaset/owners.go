package replicaset

import (
	"context"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
)

// Owners is the kind of object a Controller keeps pods for, seen as
// ReplicaSets: apps/v1 ReplicaSets themselves, or core/v1
// ReplicationControllers converted in memory (server/controllers/replication,
// as upstream's pkg/controller/replication adapts them). Views of cached
// objects may share memory with the cache: never mutate them.
type Owners interface {
	// Kind is the kind of the pods' controller references.
	Kind() schema.GroupVersionKind
	// Informer is the shared informer of the owner objects.
	Informer() cache.SharedIndexInformer
	// View returns an informer object as a ReplicaSet; false if obj is not one of the owners.
	View(obj any) (*appsv1.ReplicaSet, bool)
	// Original is the owner object behind a view (what events are recorded on).
	Original(rs *appsv1.ReplicaSet) runtime.Object
	// Fetch reads an owner from the API server, not the cache.
	Fetch(ctx context.Context, ns, name string) (*appsv1.ReplicaSet, error)
	// UpdateStatus writes the status of rs and returns the stored view.
	UpdateStatus(ctx context.Context, rs *appsv1.ReplicaSet) (*appsv1.ReplicaSet, error)
}

// Config names a Controller's owners and how it reports.
type Config struct {
	Owners Owners
	// Name names the queue and the logger.
	Name string
	// Component is the source of the Events the controller records.
	Component string
	// TerminatingReplicas: the owners' status has terminatingReplicas
	// (ReplicaSets do, ReplicationControllers do not).
	TerminatingReplicas bool
}

// replicaSets are apps/v1 ReplicaSets as Owners: views are the objects.
type replicaSets struct {
	client kubernetes.Interface
	inf    cache.SharedIndexInformer
}

var _ Owners = (*replicaSets)(nil)

// ReplicaSets returns the apps/v1 ReplicaSets of the shared cache as Owners.
func ReplicaSets(client kubernetes.Interface, inf cache.SharedIndexInformer) Owners {
	return &replicaSets{client: client, inf: inf}
}

func (r *replicaSets) Kind() schema.GroupVersionKind       { return Kind }
func (r *replicaSets) Informer() cache.SharedIndexInformer { return r.inf }

func (r *replicaSets) View(obj any) (*appsv1.ReplicaSet, bool) {
	rs, ok := obj.(*appsv1.ReplicaSet)
	return rs, ok
}

func (r *replicaSets) Original(rs *appsv1.ReplicaSet) runtime.Object { return rs }

func (r *replicaSets) Fetch(ctx context.Context, ns, name string) (*appsv1.ReplicaSet, error) {
	return r.client.AppsV1().ReplicaSets(ns).Get(ctx, name, metav1.GetOptions{})
}

func (r *replicaSets) UpdateStatus(ctx context.Context, rs *appsv1.ReplicaSet) (*appsv1.ReplicaSet, error) {
	return r.client.AppsV1().ReplicaSets(rs.Namespace).UpdateStatus(ctx, rs, metav1.UpdateOptions{})
}
