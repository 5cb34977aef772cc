package replicaset

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

// Claimer decides which objects (pods of a ReplicaSet, ReplicaSets of a
// Deployment) an owner controls, as upstream's ControllerRefManager does:
// objects it controls that still match the selector are kept, those that
// stopped matching are released, orphans that match are adopted.
type Claimer struct {
	Owner    metav1.Object
	Kind     schema.GroupVersionKind
	Selector labels.Selector
	// Fresh re-reads the owner from the API (not the cache) before the
	// first adoption, so a owner being deleted adopts nothing.
	Fresh func(ctx context.Context) (metav1.Object, error)
	// Patch applies a strategic merge patch to the named object.
	Patch func(ctx context.Context, name string, patch []byte) error
	// Finalizers are added on adoption and removed on release (the Job
	// controller's tracking finalizer).
	Finalizers []string

	once     sync.Once
	adoptErr error
}

// Claim returns the objects of objs the owner controls after adopting and
// releasing; errors of single objects are joined.
func Claim[T metav1.Object](ctx context.Context, c *Claimer, objs []T) ([]T, error) {
	var claimed []T
	var errs []error
	for _, o := range objs {
		ok, err := c.claimOne(ctx, o)
		if err != nil {
			errs = append(errs, err)
		}
		if ok {
			claimed = append(claimed, o)
		}
	}
	return claimed, errors.Join(errs...)
}

func (c *Claimer) claimOne(ctx context.Context, o metav1.Object) (bool, error) {
	matches := c.Selector.Matches(labels.Set(o.GetLabels()))
	if ref := metav1.GetControllerOfNoCopy(o); ref != nil {
		if ref.UID != c.Owner.GetUID() {
			return false, nil // someone else's
		}
		if matches {
			return true, nil
		}
		if c.Owner.GetDeletionTimestamp() != nil {
			return false, nil
		}
		err := c.Patch(ctx, o.GetName(), releasePatch(o.GetUID(), c.Owner.GetUID(), c.Finalizers))
		if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsInvalid(err) {
			return false, fmt.Errorf("releasing %s: %w", o.GetName(), err)
		}
		return false, nil
	}
	if !matches || c.Owner.GetDeletionTimestamp() != nil || o.GetDeletionTimestamp() != nil ||
		o.GetNamespace() != c.Owner.GetNamespace() {
		return false, nil
	}
	if err := c.canAdopt(ctx); err != nil {
		return false, fmt.Errorf("can't adopt %s: %w", o.GetName(), err)
	}
	if err := c.Patch(ctx, o.GetName(), adoptPatch(o.GetUID(), c.Owner, c.Kind, c.Finalizers)); err != nil {
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		return false, fmt.Errorf("adopting %s: %w", o.GetName(), err)
	}
	return true, nil
}

// canAdopt checks once, with a fresh read, that the owner still exists
// with the same UID and is not being deleted.
func (c *Claimer) canAdopt(ctx context.Context) error {
	c.once.Do(func() {
		fresh, err := c.Fresh(ctx)
		switch {
		case err != nil:
			c.adoptErr = err
		case fresh.GetUID() != c.Owner.GetUID():
			c.adoptErr = fmt.Errorf("original %s/%s is gone: got uid %v, wanted %v",
				c.Owner.GetNamespace(), c.Owner.GetName(), fresh.GetUID(), c.Owner.GetUID())
		case fresh.GetDeletionTimestamp() != nil:
			c.adoptErr = fmt.Errorf("%s/%s has just been deleted at %v",
				c.Owner.GetNamespace(), c.Owner.GetName(), fresh.GetDeletionTimestamp())
		}
	})
	return c.adoptErr
}

// ControllerRef is the ownerReference a controller puts on what it
// creates or adopts: controller=true, blockOwnerDeletion=true.
func ControllerRef(owner metav1.Object, gvk schema.GroupVersionKind) metav1.OwnerReference {
	t := true
	return metav1.OwnerReference{APIVersion: gvk.GroupVersion().String(), Kind: gvk.Kind, Name: owner.GetName(),
		UID: owner.GetUID(), Controller: &t, BlockOwnerDeletion: &t}
}

type patchMeta struct {
	Metadata struct {
		OwnerReferences any       `json:"ownerReferences"`
		UID             types.UID `json:"uid"`
		Finalizers      []string  `json:"finalizers,omitempty"`
		DropFinalizers  []string  `json:"$deleteFromPrimitiveList/finalizers,omitempty"`
	} `json:"metadata"`
}

// adoptPatch adds the controller reference (merged by uid) and the
// finalizers, and pins the object's uid, so a re-created object of the same
// name is not adopted.
func adoptPatch(uid types.UID, owner metav1.Object, gvk schema.GroupVersionKind, finalizers []string) []byte {
	var p patchMeta
	p.Metadata.OwnerReferences = []metav1.OwnerReference{ControllerRef(owner, gvk)}
	p.Metadata.UID = uid
	p.Metadata.Finalizers = finalizers
	b, _ := json.Marshal(p)
	return b
}

// releasePatch deletes the owner's reference and the finalizers.
func releasePatch(uid, owner types.UID, finalizers []string) []byte {
	var p patchMeta
	p.Metadata.OwnerReferences = []map[string]string{{"$patch": "delete", "uid": string(owner)}}
	p.Metadata.UID = uid
	p.Metadata.DropFinalizers = finalizers
	b, _ := json.Marshal(p)
	return b
}
