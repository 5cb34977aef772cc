package crd

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"go.uber.org/zap"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/orch/orch/server/registry/apiextensions"
)

// Controller is the leader's CRD controller: names acceptance and
// Established (upstream's naming and establishing controllers), and on
// deletion the removal of every custom resource before the cleanup
// finalizer goes (upstream's finalizer controller).
type Controller struct {
	client dynamic.Interface
	inf    *Informer
	served func(name string) bool
	log    *zap.Logger
	kick   chan struct{}
}

// NewController builds the controller over the informer's CRDs; served
// reports whether this server's registry serves a CRD (Registry.Serves):
// Established is set only then, in a second status write after
// NamesAccepted, as upstream's establishing controller waits for its
// handler.
func NewController(client dynamic.Interface, inf *Informer, served func(name string) bool, log *zap.Logger) *Controller {
	return &Controller{client: client, inf: inf, served: served, log: log.Named("crd-controller"), kick: make(chan struct{}, 1)}
}

// Kick asks for a sync (the informer calls it on every change).
func (c *Controller) Kick() {
	select {
	case c.kick <- struct{}{}:
	default:
	}
}

// Run syncs on every kick until ctx ends; a sync that left work (objects
// still being deleted, a failed write) is retried with back-off.
func (c *Controller) Run(ctx context.Context) error {
	backoff := time.Duration(0)
	for {
		var retry <-chan time.Time
		if backoff > 0 {
			retry = time.After(backoff)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-c.kick:
		case <-retry:
		}
		if err := c.syncAll(ctx); err != nil {
			if ctx.Err() == nil {
				c.log.Debug("sync incomplete, retrying", zap.Error(err))
			}
			backoff = min(max(2*backoff, 200*time.Millisecond), 5*time.Second)
			continue
		}
		backoff = 0
	}
}

func (c *Controller) syncAll(ctx context.Context) error {
	crds := c.inf.List()
	var errs []error
	for _, crd := range crds {
		if err := c.sync(ctx, crd, crds); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", crd.Name, err))
		}
	}
	return errors.Join(errs...)
}

func (c *Controller) sync(ctx context.Context, crd *apiextensionsv1.CustomResourceDefinition, all []*apiextensionsv1.CustomResourceDefinition) error {
	if crd.DeletionTimestamp != nil {
		return c.finalize(ctx, crd)
	}
	want := crd.DeepCopy()
	accepted, reason, msg := acceptNames(crd, all)
	if accepted {
		want.Status.AcceptedNames = withSingular(crd.Spec.Names)
		setCondition(want, apiextensionsv1.NamesAccepted, apiextensionsv1.ConditionTrue, "NoConflicts", "no conflicts found")
		if !IsEstablished(crd) && c.served(crd.Name) {
			setCondition(want, apiextensionsv1.Established, apiextensionsv1.ConditionTrue, "InitialNamesAccepted", "the initial names have been accepted")
		}
	} else {
		setCondition(want, apiextensionsv1.NamesAccepted, apiextensionsv1.ConditionFalse, reason, msg)
		if !IsEstablished(crd) {
			setCondition(want, apiextensionsv1.Established, apiextensionsv1.ConditionFalse, "NotAccepted", "not all names are accepted")
		}
	}
	return c.updateStatus(ctx, crd, want)
}

func withSingular(n apiextensionsv1.CustomResourceDefinitionNames) apiextensionsv1.CustomResourceDefinitionNames {
	if n.Singular == "" {
		n.Singular = strings.ToLower(n.Kind)
	}
	return n
}

// acceptNames checks crd's names against the names other CRDs of its group
// were accepted with.
func acceptNames(crd *apiextensionsv1.CustomResourceDefinition, all []*apiextensionsv1.CustomResourceDefinition) (bool, string, string) {
	n := withSingular(crd.Spec.Names)
	for _, o := range all {
		if o.Name == crd.Name || o.Spec.Group != crd.Spec.Group {
			continue
		}
		on := o.Status.AcceptedNames
		switch {
		case on.Plural == n.Singular || on.Singular == n.Plural || on.Singular == n.Singular:
			return false, "SingularConflict", fmt.Sprintf("%q is already in use", n.Singular)
		case on.Kind == n.Kind || on.ListKind == n.Kind:
			return false, "KindConflict", fmt.Sprintf("%q is already in use", n.Kind)
		case on.ListKind == n.ListKind || on.Kind == n.ListKind:
			return false, "ListKindConflict", fmt.Sprintf("%q is already in use", n.ListKind)
		}
		for _, s := range n.ShortNames {
			if slices.Contains(on.ShortNames, s) || on.Plural == s || on.Singular == s {
				return false, "ShortNamesConflict", fmt.Sprintf("%q is already in use", s)
			}
		}
	}
	return true, "", ""
}

func setCondition(crd *apiextensionsv1.CustomResourceDefinition, t apiextensionsv1.CustomResourceDefinitionConditionType,
	status apiextensionsv1.ConditionStatus, reason, msg string) {
	for i, cond := range crd.Status.Conditions {
		if cond.Type == t {
			if cond.Status != status {
				crd.Status.Conditions[i].LastTransitionTime = metav1.Now()
			}
			crd.Status.Conditions[i].Status, crd.Status.Conditions[i].Reason, crd.Status.Conditions[i].Message = status, reason, msg
			return
		}
	}
	crd.Status.Conditions = append(crd.Status.Conditions, apiextensionsv1.CustomResourceDefinitionCondition{
		Type: t, Status: status, Reason: reason, Message: msg, LastTransitionTime: metav1.Now()})
}

// updateStatus writes want's status when it differs from crd's.
func (c *Controller) updateStatus(ctx context.Context, crd, want *apiextensionsv1.CustomResourceDefinition) error {
	if statusEqual(crd.Status, want.Status) {
		return nil
	}
	u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(want)
	if err != nil {
		return err
	}
	_, err = c.client.Resource(CRDs).UpdateStatus(ctx, &unstructured.Unstructured{Object: u}, metav1.UpdateOptions{})
	if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
		return nil // a newer version is on its way through the informer
	}
	return err
}

func statusEqual(a, b apiextensionsv1.CustomResourceDefinitionStatus) bool {
	if len(a.Conditions) != len(b.Conditions) || !namesEqual(a.AcceptedNames, b.AcceptedNames) {
		return false
	}
	for i := range a.Conditions {
		x, y := a.Conditions[i], b.Conditions[i]
		if x.Type != y.Type || x.Status != y.Status || x.Reason != y.Reason || x.Message != y.Message {
			return false
		}
	}
	return true
}

func namesEqual(a, b apiextensionsv1.CustomResourceDefinitionNames) bool {
	return a.Plural == b.Plural && a.Singular == b.Singular && a.Kind == b.Kind && a.ListKind == b.ListKind &&
		slices.Equal(a.ShortNames, b.ShortNames) && slices.Equal(a.Categories, b.Categories)
}

// finalize deletes the CRD's objects, then drops the cleanup finalizer.
func (c *Controller) finalize(ctx context.Context, crd *apiextensionsv1.CustomResourceDefinition) error {
	if !slices.Contains(crd.Finalizers, apiextensions.CleanupFinalizer) {
		return nil
	}
	want := crd.DeepCopy()
	setCondition(want, apiextensionsv1.Terminating, apiextensionsv1.ConditionTrue, "InstanceDeletionInProgress", "CustomResource deletion is in progress")
	if err := c.updateStatus(ctx, crd, want); err != nil {
		return err
	}
	left, err := c.deleteInstances(ctx, crd)
	if err != nil {
		return err
	}
	if left > 0 {
		return fmt.Errorf("%d custom resources are still being deleted", left)
	}
	u, err := c.client.Resource(CRDs).Get(ctx, crd.Name, metav1.GetOptions{})
	if err != nil {
		return client404(err)
	}
	fins := slices.DeleteFunc(u.GetFinalizers(), func(f string) bool { return f == apiextensions.CleanupFinalizer })
	u.SetFinalizers(fins)
	_, err = c.client.Resource(CRDs).Update(ctx, u, metav1.UpdateOptions{})
	return client404(err)
}

func client404(err error) error {
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

// deleteInstances deletes every object of the CRD (through its first
// served version: all versions share one storage) and returns how many
// were still there.
func (c *Controller) deleteInstances(ctx context.Context, crd *apiextensionsv1.CustomResourceDefinition) (int, error) {
	var version string
	for _, v := range crd.Spec.Versions {
		if v.Served && version == "" || v.Storage {
			version = v.Name
		}
	}
	if !IsEstablished(crd) || version == "" {
		return 0, nil
	}
	gvr := schema.GroupVersionResource{Group: crd.Spec.Group, Version: version, Resource: crd.Status.AcceptedNames.Plural}
	ri := c.client.Resource(gvr)
	list, err := ri.List(ctx, metav1.ListOptions{})
	if err != nil {
		return 0, client404(err)
	}
	bg := metav1.DeletePropagationBackground
	for _, it := range list.Items {
		err := ri.Namespace(it.GetNamespace()).Delete(ctx, it.GetName(), metav1.DeleteOptions{PropagationPolicy: &bg})
		if err != nil && !apierrors.IsNotFound(err) {
			return 0, err
		}
	}
	return len(list.Items), nil
}
