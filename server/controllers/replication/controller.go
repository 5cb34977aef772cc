package replication

import (
	"context"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	"github.com/orch/orch/server/controllers/kit"
	"github.com/orch/orch/server/controllers/replicaset"
)

const (
	// name is upstream's: the queue and the logger.
	name = "replicationmanager"
	// Component is the source of the Events this controller records.
	Component = "replication-controller"
)

// Kind is the GroupVersionKind of the pods' controller references.
var Kind = corev1.SchemeGroupVersion.WithKind("ReplicationController")

// New registers the ReplicationController and Pod handlers on kc's shared
// cache; the controller is the ReplicaSet controller over RC views.
func New(kc *kit.Context) (*replicaset.Controller, error) {
	inf := kc.Informers.Core().V1().ReplicationControllers().Informer()
	return replicaset.NewFor(kc, replicaset.Config{Owners: &controllers{client: kc.Client, inf: inf},
		Name: name, Component: Component})
}

// controllers are ReplicationControllers as replicaset.Owners.
type controllers struct {
	client kubernetes.Interface
	inf    cache.SharedIndexInformer
}

var _ replicaset.Owners = (*controllers)(nil)

func (c *controllers) Kind() schema.GroupVersionKind       { return Kind }
func (c *controllers) Informer() cache.SharedIndexInformer { return c.inf }

func (c *controllers) View(obj any) (*appsv1.ReplicaSet, bool) {
	rc, ok := obj.(*corev1.ReplicationController)
	if !ok {
		return nil, false
	}
	return toReplicaSet(rc), true
}

func (c *controllers) Original(rs *appsv1.ReplicaSet) runtime.Object { return fromReplicaSet(rs) }

func (c *controllers) Fetch(ctx context.Context, ns, name string) (*appsv1.ReplicaSet, error) {
	rc, err := c.client.CoreV1().ReplicationControllers(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	return toReplicaSet(rc), nil
}

func (c *controllers) UpdateStatus(ctx context.Context, rs *appsv1.ReplicaSet) (*appsv1.ReplicaSet, error) {
	rc, err := c.client.CoreV1().ReplicationControllers(rs.Namespace).UpdateStatus(ctx, fromReplicaSet(rs), metav1.UpdateOptions{})
	if err != nil {
		return nil, err
	}
	return toReplicaSet(rc), nil
}
