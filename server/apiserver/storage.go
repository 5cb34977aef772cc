package apiserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/orch/orch/datastore"
	"github.com/orch/orch/server/registry"
)

// errModified is the reason of every resourceVersion conflict, as upstream words it.
var errModified = errors.New("the object has been modified; please apply your changes to the latest version and try again")

// decodeStored turns a stored value into a typed object with apiVersion,
// kind and resourceVersion (the key's ModRevision) set, converted to res's
// version when res converts by webhook.
func decodeStored(res *registry.Resource, kv *datastore.KV) (runtime.Object, error) {
	objs, err := decodeStoredAll(res, []*datastore.KV{kv})
	if err != nil {
		return nil, err
	}
	return objs[0], nil
}

// decodeStoredAll is decodeStored for several values, converted in one
// call.
func decodeStoredAll(res *registry.Resource, kvs []*datastore.KV) ([]runtime.Object, error) {
	objs := make([]runtime.Object, len(kvs))
	for i, kv := range kvs {
		obj, err := unmarshalStored(res, kv)
		if err != nil {
			return nil, err
		}
		objs[i] = obj
	}
	if c := res.Conversion; c != nil {
		if err := c.Convert(context.Background(), objs, res.GroupVersion); err != nil {
			return nil, apierrors.NewInternalError(err)
		}
	}
	for i, obj := range objs {
		if res.DefaultOnRead {
			res.Strategy.Default(obj)
		}
		setTypeMeta(res, obj)
		if err := setResourceVersion(obj, kvs[i].ModRevision); err != nil {
			return nil, err
		}
	}
	return objs, nil
}

// unmarshalStored decodes one stored value into res's type, through its
// storage version when res is stored as another one.
func unmarshalStored(res *registry.Resource, kv *datastore.KV) (runtime.Object, error) {
	sa := res.StoredAs
	if sa == nil {
		obj := res.New()
		if err := json.Unmarshal(kv.Value, obj); err != nil {
			return nil, fmt.Errorf("decode stored %s %s: %w", res.Kind, kv.Key, err)
		}
		return obj, nil
	}
	stored := sa.New()
	if err := json.Unmarshal(kv.Value, stored); err != nil {
		return nil, fmt.Errorf("decode stored %s %s: %w", res.Kind, kv.Key, err)
	}
	obj, err := sa.FromStorage(stored)
	if err != nil {
		return nil, apierrors.NewInternalError(fmt.Errorf("convert stored %s %s to %s: %w", res.Kind, kv.Key, res.GroupVersion, err))
	}
	return obj, nil
}

// encodeStored marshals obj for the store: with apiVersion and kind, without
// resourceVersion (it comes from the key's revision on read).
func encodeStored(res *registry.Resource, obj runtime.Object) ([]byte, error) {
	setTypeMeta(res, obj)
	if sa := res.StoredAs; sa != nil {
		stored, err := sa.ToStorage(obj)
		if err != nil {
			return nil, apierrors.NewInternalError(fmt.Errorf("convert %s to %s: %w", res.Kind, sa.GroupVersion, err))
		}
		stored.GetObjectKind().SetGroupVersionKind(sa.GroupVersion.WithKind(res.Kind))
		obj = stored
	}
	if c := res.Conversion; c != nil && c.Storage != res.GroupVersion {
		obj = obj.DeepCopyObject()
		if err := c.Convert(context.Background(), []runtime.Object{obj}, c.Storage); err != nil {
			return nil, apierrors.NewInternalError(err)
		}
	}
	acc, err := meta.Accessor(obj)
	if err != nil {
		return nil, fmt.Errorf("encode %s: %w", res.Kind, err)
	}
	rv := acc.GetResourceVersion()
	acc.SetResourceVersion("")
	data, err := json.Marshal(obj)
	acc.SetResourceVersion(rv)
	if err != nil {
		return nil, fmt.Errorf("encode %s: %w", res.Kind, err)
	}
	return data, nil
}

func setTypeMeta(res *registry.Resource, obj runtime.Object) {
	obj.GetObjectKind().SetGroupVersionKind(res.GroupVersion.WithKind(res.Kind))
}

func setResourceVersion(obj runtime.Object, rev int64) error {
	acc, err := meta.Accessor(obj)
	if err != nil {
		return fmt.Errorf("set resourceVersion: %w", err)
	}
	acc.SetResourceVersion(strconv.FormatInt(rev, 10))
	return nil
}

// parseRV reads a resourceVersion; "" is 0.
func parseRV(rv string) (int64, error) {
	if rv == "" {
		return 0, nil
	}
	n, err := strconv.ParseInt(rv, 10, 64)
	if err != nil || n < 0 {
		return 0, apierrors.NewBadRequest(fmt.Sprintf("invalid resource version %q: must be a non-negative integer", rv))
	}
	return n, nil
}

// getStored reads one object; a missing key is a NotFound for gr/name.
func (s *Server) getStored(ctx context.Context, res *registry.Resource, ns, name string) (runtime.Object, *datastore.KV, error) {
	kv, err := s.store.Get(ctx, res.Key(ns, name))
	if err != nil {
		return nil, nil, storeError(err, groupResource(res), name)
	}
	obj, err := decodeStored(res, kv)
	if err != nil {
		return nil, nil, err
	}
	return obj, kv, nil
}

// storeError maps datastore sentinels to API errors about gr/name.
func storeError(err error, gr schema.GroupResource, name string) error {
	switch {
	case errors.Is(err, datastore.ErrNotFound):
		return apierrors.NewNotFound(gr, name)
	case errors.Is(err, datastore.ErrKeyExists):
		return apierrors.NewAlreadyExists(gr, name)
	case errors.Is(err, datastore.ErrConflict):
		return apierrors.NewConflict(gr, name, errModified)
	}
	return err
}

func groupResource(res *registry.Resource) schema.GroupResource {
	return schema.GroupResource{Group: res.GroupVersion.Group, Resource: res.Resource}
}

func objectMeta(obj runtime.Object) metav1.Object {
	acc, err := meta.Accessor(obj)
	if err != nil {
		panic(fmt.Sprintf("apiserver: %T has no ObjectMeta: %v", obj, err))
	}
	return acc
}
