package apiserver

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var storageClassGVR = schema.GroupVersionResource{Group: "storage.k8s.io", Version: "v1", Resource: "storageclasses"}

// isDefaultClass is the annotation that marks the default StorageClass.
const isDefaultClass = "storageclass.kubernetes.io/is-default-class"

// admitMutating runs the mutating admission plugins on create, in
// upstream's order: DefaultStorageClass, Priority, then LimitRanger.
func (s *Server) admitMutating(ctx context.Context, rc *reqCtx, obj runtime.Object) error {
	switch o := obj.(type) {
	case *corev1.PersistentVolumeClaim:
		if err := s.defaultStorageClass(ctx, o); err != nil {
			return err
		}
	case *corev1.Pod:
		if err := s.admitPriority(ctx, rc, o); err != nil {
			return err
		}
	}
	return s.admitLimitRanges(ctx, rc, obj)
}

// defaultStorageClass is the DefaultStorageClass admission plugin: a claim
// that names no class gets the default one (the newest, by creation time
// then name, when several are marked).
func (s *Server) defaultStorageClass(ctx context.Context, pvc *corev1.PersistentVolumeClaim) error {
	if pvc.Spec.StorageClassName != nil {
		return nil
	}
	res := s.byGVR[storageClassGVR]
	if res == nil {
		return nil
	}
	page, err := s.store.List(ctx, res.Prefix(""), res.Prefix(""), 0)
	if err != nil {
		return err
	}
	var best *storagev1.StorageClass
	for i := range page.KVs {
		obj, err := decodeStored(res, &page.KVs[i])
		if err != nil {
			return err
		}
		sc := obj.(*storagev1.StorageClass)
		if sc.Annotations[isDefaultClass] != "true" {
			continue
		}
		if best == nil || sc.CreationTimestamp.After(best.CreationTimestamp.Time) ||
			(sc.CreationTimestamp.Equal(&best.CreationTimestamp) && sc.Name < best.Name) {
			best = sc
		}
	}
	if best != nil {
		name := best.Name
		pvc.Spec.StorageClassName = &name
	}
	return nil
}
