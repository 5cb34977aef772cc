package satoken

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"

	"github.com/orch/orch/datastore"
)

// StoreObjects reads the objects tokens name straight from the datastore
// (the keys kube-apiserver's etcd layout uses), so a deleted object
// invalidates its tokens at once.
type StoreObjects struct {
	Store datastore.Store
}

var _ Objects = StoreObjects{}

// ServiceAccount implements Objects.
func (s StoreObjects) ServiceAccount(ctx context.Context, ns, name string) (*corev1.ServiceAccount, error) {
	return get[corev1.ServiceAccount](ctx, s.Store, "/registry/serviceaccounts/"+ns+"/"+name)
}

// Pod implements Objects.
func (s StoreObjects) Pod(ctx context.Context, ns, name string) (*corev1.Pod, error) {
	return get[corev1.Pod](ctx, s.Store, "/registry/pods/"+ns+"/"+name)
}

// Secret implements Objects.
func (s StoreObjects) Secret(ctx context.Context, ns, name string) (*corev1.Secret, error) {
	return get[corev1.Secret](ctx, s.Store, "/registry/secrets/"+ns+"/"+name)
}

func get[T any](ctx context.Context, st datastore.Store, key string) (*T, error) {
	kv, err := st.Get(ctx, key)
	if errors.Is(err, datastore.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("get %s: %w", key, err)
	}
	obj := new(T)
	if err := json.Unmarshal(kv.Value, obj); err != nil {
		return nil, fmt.Errorf("decode %s: %w", key, err)
	}
	return obj, nil
}
