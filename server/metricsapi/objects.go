package metricsapi

import (
	"context"
	"sync/atomic"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/metadata"
)

// MetadataObjects finds nodes and pods through a metadata client.
type MetadataObjects struct{ Client metadata.Interface }

var _ Objects = MetadataObjects{}

// Get implements Objects.
func (o MetadataObjects) Get(ctx context.Context, gvr schema.GroupVersionResource, namespace, name string) (*metav1.PartialObjectMetadata, error) {
	return o.Client.Resource(gvr).Namespace(namespace).Get(ctx, name, metav1.GetOptions{})
}

// List implements Objects.
func (o MetadataObjects) List(ctx context.Context, gvr schema.GroupVersionResource, namespace string, label labels.Selector) ([]metav1.PartialObjectMetadata, error) {
	opts := metav1.ListOptions{}
	if label != nil && !label.Empty() {
		opts.LabelSelector = label.String()
	}
	l, err := o.Client.Resource(gvr).Namespace(namespace).List(ctx, opts)
	if err != nil {
		return nil, err
	}
	return l.Items, nil
}

// LateObjects is an Objects set once the client exists (the loopback of
// the API server that serves the resources); until then it answers 503.
type LateObjects struct{ p atomic.Pointer[Objects] }

var _ Objects = (*LateObjects)(nil)

// Set makes o answer.
func (l *LateObjects) Set(o Objects) { l.p.Store(&o) }

func (l *LateObjects) get() (Objects, error) {
	if p := l.p.Load(); p != nil {
		return *p, nil
	}
	return nil, apierrors.NewServiceUnavailable("the metrics API is starting")
}

// Get implements Objects.
func (l *LateObjects) Get(ctx context.Context, gvr schema.GroupVersionResource, namespace, name string) (*metav1.PartialObjectMetadata, error) {
	o, err := l.get()
	if err != nil {
		return nil, err
	}
	return o.Get(ctx, gvr, namespace, name)
}

// List implements Objects.
func (l *LateObjects) List(ctx context.Context, gvr schema.GroupVersionResource, namespace string, label labels.Selector) ([]metav1.PartialObjectMetadata, error) {
	o, err := l.get()
	if err != nil {
		return nil, err
	}
	return o.List(ctx, gvr, namespace, label)
}
