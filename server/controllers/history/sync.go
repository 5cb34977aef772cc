package history

import (
	"context"
	"fmt"
	"maps"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// Sync returns the parent's current revision (creating it, or renumbering
// a matching old one to the newest) and the other revisions.
func (s *Store) Sync(ctx context.Context, p Parent) (cur *appsv1.ControllerRevision, old []*appsv1.ControllerRevision, err error) {
	data, err := Patch(p.Template)
	if err != nil {
		return nil, nil, err
	}
	owned, err := s.Owned(p)
	if err != nil {
		return nil, nil, err
	}
	var matches []*appsv1.ControllerRevision
	for _, cr := range owned {
		if SameData(cr.Data.Raw, data) {
			matches = append(matches, cr)
		} else {
			old = append(old, cr)
		}
	}
	next := MaxRevision(old) + 1
	if len(matches) == 0 {
		cur, err = s.create(ctx, p, data, next)
		return cur, old, err
	}
	// Several equal revisions: keep the newest, drop the rest (upstream's dedup).
	cur = matches[len(matches)-1]
	for _, dup := range matches[:len(matches)-1] {
		if err := s.delete(ctx, dup); err != nil {
			return nil, nil, err
		}
	}
	if cur.Revision < next {
		upd := cur.DeepCopy()
		upd.Revision = next
		if cur, err = s.Client.AppsV1().ControllerRevisions(upd.Namespace).Update(ctx, upd, metav1.UpdateOptions{}); err != nil {
			return nil, nil, fmt.Errorf("renumbering controller revision %s: %w", upd.Name, err)
		}
	}
	return cur, old, nil
}

func (s *Store) create(ctx context.Context, p Parent, data []byte, number int64) (*appsv1.ControllerRevision, error) {
	hash := Hash(data, p.CollisionCount)
	lbls := maps.Clone(p.Template.Labels)
	if lbls == nil {
		lbls = map[string]string{}
	}
	lbls[HashLabel] = hash
	cr := &appsv1.ControllerRevision{
		ObjectMeta: metav1.ObjectMeta{
			Name:            p.Object.GetName() + "-" + hash,
			Namespace:       p.Object.GetNamespace(),
			Labels:          lbls,
			Annotations:     maps.Clone(p.Annotations),
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(p.Object, p.Kind)},
		},
		Data:     runtime.RawExtension{Raw: data},
		Revision: number,
	}
	if s.Lister == nil {
		return cr, nil // no history resource: keep the revision in memory only
	}
	got, err := s.Client.AppsV1().ControllerRevisions(cr.Namespace).Create(ctx, cr, metav1.CreateOptions{})
	switch {
	case err == nil:
		return got, nil
	case apierrors.IsAlreadyExists(err):
		existing, gerr := s.Client.AppsV1().ControllerRevisions(cr.Namespace).Get(ctx, cr.Name, metav1.GetOptions{})
		if gerr != nil {
			return nil, fmt.Errorf("reading controller revision %s: %w", cr.Name, gerr)
		}
		if ref := metav1.GetControllerOf(existing); ref != nil && ref.UID == p.Object.GetUID() && SameData(existing.Data.Raw, data) {
			return existing, nil
		}
		return nil, fmt.Errorf("controller revision %s: %w", cr.Name, ErrCollision)
	default:
		return nil, fmt.Errorf("creating controller revision %s: %w", cr.Name, err)
	}
}

func (s *Store) delete(ctx context.Context, cr *appsv1.ControllerRevision) error {
	err := s.Client.AppsV1().ControllerRevisions(cr.Namespace).Delete(ctx, cr.Name, metav1.DeleteOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("deleting controller revision %s: %w", cr.Name, err)
	}
	return nil
}

// Truncate deletes the oldest of old beyond limit, sparing revisions whose
// hash a live pod still carries (inUse).
func (s *Store) Truncate(ctx context.Context, old []*appsv1.ControllerRevision, limit int, inUse map[string]bool) error {
	SortByRevision(old)
	var deletable []*appsv1.ControllerRevision
	for _, cr := range old {
		if !inUse[cr.Labels[HashLabel]] && !inUse[cr.Name] {
			deletable = append(deletable, cr)
		}
	}
	extra := len(old) - limit
	for i := 0; i < extra && i < len(deletable); i++ {
		if err := s.delete(ctx, deletable[i]); err != nil {
			return err
		}
	}
	return nil
}
