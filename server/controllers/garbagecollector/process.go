package garbagecollector

import (
	"context"
	"fmt"
	"slices"

	"go.uber.org/zap"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
)

// ownerState is what a dependent's owner reference points at.
type ownerState int

const (
	ownerPresent ownerState = iota
	ownerGone
	ownerWaiting // being deleted in the foreground: its dependents go first
)

// processDependent deletes a dependent whose owners are all gone (or
// waiting for it), and drops references to gone owners otherwise.
func (c *Controller) processDependent(ctx context.Context, uid types.UID) error {
	n, ok := c.graph.get(uid)
	if !ok || len(n.owners) == 0 || (n.deleting && !n.has(metav1.FinalizerDeleteDependents)) {
		return nil
	}
	if n.deleting {
		return nil // in foreground deletion itself: processOwner handles it
	}
	var solid, dangling, waiting []metav1.OwnerReference
	for _, ref := range n.owners {
		st, err := c.ownerState(ctx, ref, n.namespace)
		if err != nil {
			return err
		}
		switch st {
		case ownerPresent:
			solid = append(solid, ref)
		case ownerGone:
			dangling = append(dangling, ref)
		default:
			waiting = append(waiting, ref)
		}
	}
	switch {
	case len(solid) > 0 && len(dangling)+len(waiting) > 0:
		return c.dropOwners(ctx, &n, append(dangling, waiting...))
	case len(solid) > 0:
		return nil
	}
	// Deleting: re-read the dependent first, as upstream's attemptToDeleteItem
	// does. The cache may still show an owner reference that orphaning has
	// just dropped; the fresh update re-queues the dependent.
	if fresh, err := c.stillOwned(ctx, &n); err != nil || !fresh {
		return err
	}
	switch {
	case len(waiting) > 0 && c.graph.hasDependents(n.uid):
		if c.dependentDeletingDependents(n.uid) {
			// A dependent of n waits for its own dependents too: a cycle,
			// perhaps. As upstream, n stops blocking its owners, so they
			// need not wait for n (which waits for them).
			if err := c.unblockOwners(ctx, &n); err != nil {
				return err
			}
		}
		c.log.Debug("deleting dependent in the foreground", zap.String("object", n.namespace+"/"+n.name))
		return c.deleteObject(ctx, &n, metav1.DeletePropagationForeground)
	default:
		c.log.Debug("deleting dependent whose owners are gone", zap.Stringer("resource", n.res), zap.String("object", n.namespace+"/"+n.name))
		return c.deleteObject(ctx, &n, metav1.DeletePropagationBackground)
	}
}

// ownerState checks the cache and, when the owner is not there, the API
// (the cache may lag, or the owner was deleted while the collector was down).
func (c *Controller) ownerState(ctx context.Context, ref metav1.OwnerReference, namespace string) (ownerState, error) {
	if o, ok := c.graph.get(ref.UID); ok {
		if o.deleting && o.has(metav1.FinalizerDeleteDependents) {
			return ownerWaiting, nil
		}
		return ownerPresent, nil
	}
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	if err != nil {
		return ownerPresent, nil // unresolvable: never delete on a guess
	}
	c.kindsMu.RLock()
	res, ok := c.kinds[gv.WithKind(ref.Kind).GroupKind()]
	c.kindsMu.RUnlock()
	if !ok {
		// Not served (yet): a CRD's kind appears at the next discovery, so
		// keep the dependent and look again later, as upstream does.
		return ownerPresent, fmt.Errorf("owner kind %s is not served (yet)", gv.WithKind(ref.Kind).GroupKind())
	}
	if !res.namespaced {
		namespace = ""
	}
	m, err := c.getMeta(ctx, res.gvr, namespace, ref.Name)
	switch {
	case apierrors.IsNotFound(err):
		return ownerGone, nil
	case err != nil:
		return ownerPresent, fmt.Errorf("get owner %s %s: %w", ref.Kind, ref.Name, err)
	case m.UID != ref.UID:
		return ownerGone, nil
	case m.DeletionTimestamp != nil && slices.Contains(m.Finalizers, metav1.FinalizerDeleteDependents):
		return ownerWaiting, nil
	}
	return ownerPresent, nil
}

// dropOwners removes the references to drop from n.
func (c *Controller) dropOwners(ctx context.Context, n *node, drop []metav1.OwnerReference) error {
	keep := []metav1.OwnerReference{}
	for _, r := range n.owners {
		if !slices.ContainsFunc(drop, func(d metav1.OwnerReference) bool { return d.UID == r.UID }) {
			keep = append(keep, r)
		}
	}
	return c.jsonPatch(ctx, n,
		map[string]any{"op": "test", "path": "/metadata/ownerReferences", "value": n.owners},
		map[string]any{"op": "replace", "path": "/metadata/ownerReferences", "value": keep})
}

// dependentDeletingDependents tells whether a dependent of uid is itself
// being deleted in the foreground (upstream's cycle detection, with its
// false positives).
func (c *Controller) dependentDeletingDependents(uid types.UID) bool {
	for _, d := range c.graph.dependentsOf(uid) {
		if d.deleting && d.has(metav1.FinalizerDeleteDependents) {
			return true
		}
	}
	return false
}

// unblockOwners sets blockOwnerDeletion false on n's owner references.
func (c *Controller) unblockOwners(ctx context.Context, n *node) error {
	refs := slices.Clone(n.owners)
	changed := false
	for i := range refs {
		if refs[i].BlockOwnerDeletion != nil && *refs[i].BlockOwnerDeletion {
			refs[i].BlockOwnerDeletion = ptr.To(false)
			changed = true
		}
	}
	if !changed {
		return nil
	}
	return c.jsonPatch(ctx, n,
		map[string]any{"op": "test", "path": "/metadata/ownerReferences", "value": n.owners},
		map[string]any{"op": "replace", "path": "/metadata/ownerReferences", "value": refs})
}

// processOwner handles a deleted owner's orphan or foregroundDeletion finalizer.
func (c *Controller) processOwner(ctx context.Context, uid types.UID) error {
	n, ok := c.graph.get(uid)
	if !ok || !n.deleting {
		return nil
	}
	deps := c.graph.dependentsOf(uid)
	switch {
	case n.has(metav1.FinalizerOrphanDependents):
		for i := range deps {
			if err := c.dropOwners(ctx, &deps[i], []metav1.OwnerReference{{UID: uid}}); err != nil {
				return err
			}
		}
		return c.removeFinalizer(ctx, &n, metav1.FinalizerOrphanDependents)
	case n.has(metav1.FinalizerDeleteDependents):
		blocking := 0
		for _, d := range deps {
			c.queue.Add(keyDependent + string(d.uid))
			if blocks(d, uid) {
				blocking++
			}
		}
		if blocking > 0 {
			return nil
		}
		return c.removeFinalizer(ctx, &n, metav1.FinalizerDeleteDependents)
	}
	return nil
}

// blocks tells whether d's reference to owner has blockOwnerDeletion.
func blocks(d node, owner types.UID) bool {
	for _, r := range d.owners {
		if r.UID == owner && r.BlockOwnerDeletion != nil && *r.BlockOwnerDeletion {
			return true
		}
	}
	return false
}

// removeFinalizer drops f from n (a test of the list guards concurrent edits).
func (c *Controller) removeFinalizer(ctx context.Context, n *node, f string) error {
	keep := []string{}
	for _, x := range n.finalizers {
		if x != f {
			keep = append(keep, x)
		}
	}
	return c.jsonPatch(ctx, n,
		map[string]any{"op": "test", "path": "/metadata/finalizers", "value": n.finalizers},
		map[string]any{"op": "replace", "path": "/metadata/finalizers", "value": keep})
}

// stillOwned reports whether the dependent, read live, is the cached object
// with the same owner references.
func (c *Controller) stillOwned(ctx context.Context, n *node) (bool, error) {
	live, err := c.getMeta(ctx, n.res, n.namespace, n.name)
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("re-read %s %s/%s: %w", n.res.Resource, n.namespace, n.name, err)
	}
	if live.UID != n.uid || len(live.OwnerReferences) != len(n.owners) {
		return false, nil
	}
	for i := range live.OwnerReferences {
		if live.OwnerReferences[i].UID != n.owners[i].UID {
			return false, nil
		}
	}
	return true, nil
}
