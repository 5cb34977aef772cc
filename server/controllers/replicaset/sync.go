package replicaset

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"go.uber.org/zap"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"
)

// slowStartInitialBatch is the first batch of pod creations; each fully
// successful batch doubles the next (upstream's slow start), so a quota
// error costs one request, not replicas requests.
const slowStartInitialBatch = 1

// sync reconciles one ReplicaSet: claim pods, create or delete to match
// spec.replicas (only when earlier expectations are met), write status.
func (c *Controller) sync(ctx context.Context, k string) error {
	ns, name, err := cache.SplitMetaNamespaceKey(k)
	if err != nil {
		return nil
	}
	rs, err := c.get(ns, name)
	if apierrors.IsNotFound(err) {
		c.exp.Delete(k)
		return nil
	}
	if err != nil {
		return err
	}
	needsSync := c.exp.Satisfied(k)
	sel, err := metav1.LabelSelectorAsSelector(rs.Spec.Selector)
	if err != nil {
		c.log.Warn("invalid selector", zap.String("replicaset", k), zap.Error(err))
		return nil
	}
	all, err := PodsOwnedBy(c.podIndexer, ns, rs.UID, true)
	if err != nil {
		return err
	}
	active, err := c.claimPods(ctx, rs, sel, filterActive(all))
	if err != nil {
		return err
	}
	terminating := filterTerminating(rs, sel, all)
	var manageErr error
	if needsSync && rs.DeletionTimestamp == nil {
		manageErr = c.manageReplicas(ctx, active, rs)
	}
	now := c.now()
	st := calculateStatus(rs, active, terminating, manageErr, now)
	if !c.terminating {
		st.TerminatingReplicas = nil
	}
	updated, err := c.updateStatus(ctx, rs.DeepCopy(), st)
	if err != nil {
		return err
	}
	if manageErr != nil {
		return manageErr
	}
	if updated.Spec.MinReadySeconds > 0 && updated.Status.ReadyReplicas != updated.Status.AvailableReplicas {
		next := time.Duration(updated.Spec.MinReadySeconds) * time.Second
		if d := nextAvailabilityCheck(active, updated.Spec.MinReadySeconds, c.now()); d != nil {
			next = *d
		}
		c.queue.AddAfter(k, next)
	}
	return nil
}

func filterActive(pods []*corev1.Pod) []*corev1.Pod {
	var out []*corev1.Pod
	for _, p := range pods {
		if PodActive(p) {
			out = append(out, p)
		}
	}
	return out
}

// filterTerminating: the pods rs controls that are being deleted but have
// not finished (status.terminatingReplicas, on by default since 1.35).
func filterTerminating(rs *appsv1.ReplicaSet, sel labels.Selector, pods []*corev1.Pod) []*corev1.Pod {
	var out []*corev1.Pod
	for _, p := range pods {
		if p.DeletionTimestamp != nil && p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed &&
			metav1.IsControlledBy(p, rs) && sel.Matches(labels.Set(p.Labels)) {
			out = append(out, p)
		}
	}
	return out
}

func (c *Controller) claimPods(ctx context.Context, rs *appsv1.ReplicaSet, sel labels.Selector, pods []*corev1.Pod) ([]*corev1.Pod, error) {
	api := c.client.CoreV1().Pods(rs.Namespace)
	cl := &Claimer{Owner: rs, Kind: c.owners.Kind(), Selector: sel,
		Fresh: func(ctx context.Context) (metav1.Object, error) {
			return c.owners.Fetch(ctx, rs.Namespace, rs.Name)
		},
		Patch: func(ctx context.Context, name string, patch []byte) error {
			_, err := api.Patch(ctx, name, types.StrategicMergePatchType, patch, metav1.PatchOptions{})
			return err
		}}
	return Claim(ctx, cl, pods)
}

// manageReplicas creates or deletes the difference (at most BurstReplicas).
func (c *Controller) manageReplicas(ctx context.Context, active []*corev1.Pod, rs *appsv1.ReplicaSet) error {
	diff := len(active) - int(*rs.Spec.Replicas)
	k := key(rs)
	switch {
	case diff < 0:
		n := min(-diff, BurstReplicas)
		c.exp.ExpectCreations(k, n)
		ok, err := slowStartBatch(n, slowStartInitialBatch, func() error { return c.createPod(ctx, rs) })
		for range n - ok {
			c.exp.CreationObserved(k) // never attempted or failed: the cache will not show them
		}
		return err
	case diff > 0:
		n := min(diff, BurstReplicas)
		victims := podsToDelete(active, c.relatedPods(rs), n, c.now())
		return c.deletePods(ctx, rs, victims)
	}
	return nil
}

// createPod creates one pod from the template, named "<rs>-<5 random>".
func (c *Controller) createPod(ctx context.Context, rs *appsv1.ReplicaSet) error {
	pod := PodFromTemplate(&rs.Spec.Template, rs.Name, ControllerRef(rs, c.owners.Kind()))
	out, err := c.client.CoreV1().Pods(rs.Namespace).Create(ctx, pod, metav1.CreateOptions{})
	if err != nil {
		if apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause) {
			return nil
		}
		c.recorder.Eventf(c.owners.Original(rs), corev1.EventTypeWarning, "FailedCreate", "Error creating: %v", err)
		return err
	}
	c.recorder.Eventf(c.owners.Original(rs), corev1.EventTypeNormal, "SuccessfulCreate", "Created pod: %v", out.Name)
	return nil
}

// PodFromTemplate is the pod a controller creates from template.
func PodFromTemplate(t *corev1.PodTemplateSpec, owner string, ref metav1.OwnerReference) *corev1.Pod {
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{GenerateName: owner + "-",
		Labels: copyMap(t.Labels), Annotations: copyMap(t.Annotations),
		Finalizers: append([]string(nil), t.Finalizers...), OwnerReferences: []metav1.OwnerReference{ref}}}
	pod.Spec = *t.Spec.DeepCopy()
	return pod
}

func copyMap(m map[string]string) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

func (c *Controller) deletePods(ctx context.Context, rs *appsv1.ReplicaSet, victims []*corev1.Pod) error {
	k := key(rs)
	keys := make([]string, len(victims))
	for i, p := range victims {
		keys[i] = podKey(p)
	}
	c.exp.ExpectDeletions(k, keys)
	errs := make([]error, len(victims))
	var wg sync.WaitGroup
	for i, p := range victims {
		wg.Go(func() {
			err := c.client.CoreV1().Pods(rs.Namespace).Delete(ctx, p.Name, metav1.DeleteOptions{})
			if err == nil {
				c.recorder.Eventf(c.owners.Original(rs), corev1.EventTypeNormal, "SuccessfulDelete", "Deleted pod: %v", p.Name)
				return
			}
			c.exp.DeletionObserved(k, podKey(p))
			if !apierrors.IsNotFound(err) {
				c.recorder.Eventf(c.owners.Original(rs), corev1.EventTypeWarning, "FailedDelete", "Error deleting: %v", err)
				errs[i] = fmt.Errorf("unable to delete pods: %w", err)
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// relatedPods are the pods of every owner with the same controller
// (a Deployment's old and new ReplicaSets), for the same-node rank.
func (c *Controller) relatedPods(rs *appsv1.ReplicaSet) []*corev1.Pod {
	owners := []*appsv1.ReplicaSet{rs}
	if ref := metav1.GetControllerOfNoCopy(rs); ref != nil {
		all, _ := c.list(rs.Namespace)
		owners = owners[:0]
		for _, o := range all {
			if r := metav1.GetControllerOfNoCopy(o); r != nil && r.UID == ref.UID {
				owners = append(owners, o)
			}
		}
	}
	var out []*corev1.Pod
	for _, o := range owners {
		pods, _ := PodsOwnedBy(c.podIndexer, o.Namespace, o.UID, false)
		out = append(out, pods...)
	}
	return out
}

// slowStartBatch calls fn count times in batches of 1, 2, 4, ... and stops
// after the first batch with an error; it returns the successes.
func slowStartBatch(count, initial int, fn func() error) (int, error) {
	remaining, ok := count, 0
	for batch := min(remaining, initial); batch > 0; batch = min(2*batch, remaining) {
		errCh := make(chan error, batch)
		var wg sync.WaitGroup
		for range batch {
			wg.Go(func() {
				if err := fn(); err != nil {
					errCh <- err
				}
			})
		}
		wg.Wait()
		ok += batch - len(errCh)
		if len(errCh) > 0 {
			return ok, <-errCh
		}
		remaining -= batch
	}
	return ok, nil
}
