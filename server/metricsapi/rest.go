package metricsapi

import (
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	metricsv1beta1 "k8s.io/metrics/pkg/apis/metrics/v1beta1"

	"github.com/orch/orch/server/apiserver"
	"github.com/orch/orch/server/registry"
)

// GroupVersion is the served group/version.
var GroupVersion = metricsv1beta1.SchemeGroupVersion

// Objects finds the nodes and pods that metrics are served for: their
// names and labels (a metadata client over the loopback in orch server).
type Objects interface {
	// Get returns one object's metadata or a NotFound StatusError.
	Get(ctx context.Context, gvr schema.GroupVersionResource, namespace, name string) (*metav1.PartialObjectMetadata, error)
	// List returns the objects matching label ("" = namespace all).
	List(ctx context.Context, gvr schema.GroupVersionResource, namespace string, label labels.Selector) ([]metav1.PartialObjectMetadata, error)
}

var (
	nodesGVR = corev1.SchemeGroupVersion.WithResource("nodes")
	podsGVR  = corev1.SchemeGroupVersion.WithResource("pods")
)

// Resources are the read-only nodes and pods of metrics.k8s.io/v1beta1,
// answered from store for the objects objects finds.
func Resources(store *Store, objects Objects) []apiserver.Virtual {
	return []apiserver.Virtual{
		{Resource: readOnly(registry.Def{GroupVersion: GroupVersion, Resource: "nodes", Kind: "NodeMetrics",
			New: registry.NewObjects[metricsv1beta1.NodeMetrics](), NewList: registry.NewObjects[metricsv1beta1.NodeMetricsList](),
			Hooks: registry.Hooks{Columns: usageColumns, Row: nodeRow}}),
			Read: &reader{store: store, objects: objects, gvr: nodesGVR, build: nodeMetrics(store)}},
		{Resource: readOnly(registry.Def{GroupVersion: GroupVersion, Resource: "pods", Kind: "PodMetrics", Namespaced: true,
			New: registry.NewObjects[metricsv1beta1.PodMetrics](), NewList: registry.NewObjects[metricsv1beta1.PodMetricsList](),
			Hooks: registry.Hooks{Columns: usageColumns, Row: podRow}}),
			Read: &reader{store: store, objects: objects, gvr: podsGVR, build: podMetrics(store)}},
	}
}

func readOnly(d registry.Def) *registry.Resource {
	r := d.Build()
	r.Verbs = []string{"get", "list"}
	return r
}

// reader serves one resource: the metrics of the nodes or pods objects
// finds that the store has usage for.
type reader struct {
	store   *Store
	objects Objects
	gvr     schema.GroupVersionResource
	// build returns the metrics of an object, false when it has none yet.
	build func(m *metav1.PartialObjectMetadata, now time.Time) (runtime.Object, bool)
}

var _ apiserver.VirtualReader = (*reader)(nil)

// Get implements apiserver.VirtualReader: NotFound for a missing node or
// pod, and NotFound for its metrics when it has none (as metrics-server).
func (r *reader) Get(ctx context.Context, namespace, name string) (runtime.Object, error) {
	m, err := r.objects.Get(ctx, r.gvr, namespace, name)
	if err != nil {
		return nil, err
	}
	obj, ok := r.build(m, time.Now())
	if !ok {
		qualified := name
		if namespace != "" {
			qualified = namespace + "/" + name
		}
		return nil, apierrors.NewNotFound(GroupVersion.WithResource(r.gvr.Resource).GroupResource(), qualified)
	}
	return obj, nil
}

// List implements apiserver.VirtualReader: the objects matching label and
// field (metadata.name, metadata.namespace) that have metrics, sorted by
// namespace and name.
func (r *reader) List(ctx context.Context, namespace string, label labels.Selector, field fields.Selector) ([]runtime.Object, error) {
	items, err := r.objects.List(ctx, r.gvr, namespace, label)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	out := make([]runtime.Object, 0, len(items))
	for i := range items {
		m := &items[i]
		set := fields.Set{"metadata.name": m.Name}
		if r.gvr == podsGVR {
			set["metadata.namespace"] = m.Namespace
		}
		if field != nil && !field.Matches(set) {
			continue
		}
		if obj, ok := r.build(m, now); ok {
			out = append(out, obj)
		}
	}
	return out, nil
}

func nodeMetrics(store *Store) func(*metav1.PartialObjectMetadata, time.Time) (runtime.Object, bool) {
	return func(m *metav1.PartialObjectMetadata, now time.Time) (runtime.Object, bool) {
		u, ok := store.Node(m.Name)
		if !ok {
			return nil, false
		}
		return &metricsv1beta1.NodeMetrics{
			ObjectMeta: metav1.ObjectMeta{Name: m.Name, Labels: m.Labels, CreationTimestamp: metav1.NewTime(now)},
			Timestamp:  metav1.NewTime(u.Time),
			Window:     metav1.Duration{Duration: u.Window},
			Usage:      u.Resources,
		}, true
	}
}

func podMetrics(store *Store) func(*metav1.PartialObjectMetadata, time.Time) (runtime.Object, bool) {
	return func(m *metav1.PartialObjectMetadata, now time.Time) (runtime.Object, bool) {
		u, ok := store.Pod(PodRef{Namespace: m.Namespace, Name: m.Name})
		if !ok {
			return nil, false
		}
		pm := &metricsv1beta1.PodMetrics{
			ObjectMeta: metav1.ObjectMeta{Name: m.Name, Namespace: m.Namespace, Labels: m.Labels, CreationTimestamp: metav1.NewTime(now)},
			Timestamp:  metav1.NewTime(u.Time),
			Window:     metav1.Duration{Duration: u.Window},
			Containers: make([]metricsv1beta1.ContainerMetrics, 0, len(u.Containers)),
		}
		for _, c := range u.Containers {
			pm.Containers = append(pm.Containers, metricsv1beta1.ContainerMetrics{Name: c.Name, Usage: c.Resources})
		}
		return pm, true
	}
}
