package cachetrim

import (
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/informers"
)

// ManagedFields is a cache.TransformFunc that clears managedFields.
func ManagedFields(obj any) (any, error) {
	if a, err := meta.Accessor(obj); err == nil && a.GetManagedFields() != nil {
		a.SetManagedFields(nil)
	}
	return obj, nil
}

// Option makes an informer factory trim every object it caches.
func Option() informers.SharedInformerOption { return informers.WithTransform(ManagedFields) }
