package daemonset

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// manage creates the missing daemon pods and deletes the ones that should
// not be there (upstream's manage + podsShouldBeOnNode).
func (c *Controller) manage(ctx context.Context, st *state) error {
	var create []string
	var del []*corev1.Pod
	known := map[string]bool{}
	for _, node := range st.nodes {
		known[node.Name] = true
		cr, d := c.podsShouldBeOnNode(st, node)
		create = append(create, cr...)
		del = append(del, d...)
	}
	for node, pods := range st.byNode {
		if known[node] {
			continue
		}
		for _, p := range pods { // node gone (or never pinned): delete
			if p.DeletionTimestamp == nil {
				del = append(del, p)
			}
		}
	}
	return c.syncNodes(ctx, st, del, create)
}

func (c *Controller) podsShouldBeOnNode(st *state, node *corev1.Node) (create []string, del []*corev1.Pod) {
	run, keep := shouldRun(node, st.spec)
	pods, exists := st.byNode[node.Name]
	switch {
	case run && !exists:
		return []string{node.Name}, nil
	case keep:
		var running []*corev1.Pod
		for _, p := range pods {
			switch {
			case p.DeletionTimestamp != nil:
			case p.Status.Phase == corev1.PodFailed:
				c.recorder.Eventf(st.ds, corev1.EventTypeWarning, reasonFailedPod,
					"Found failed daemon pod %s/%s on node %s, will try to kill it", p.Namespace, p.Name, node.Name)
				del = append(del, p)
			case p.Status.Phase == corev1.PodSucceeded:
				c.recorder.Eventf(st.ds, corev1.EventTypeNormal, reasonSucceededPod,
					"Found succeeded daemon pod %s/%s on node %s, will try to delete it", p.Namespace, p.Name, node.Name)
				del = append(del, p)
			default:
				running = append(running, p)
			}
		}
		if !allowsSurge(st.ds) {
			if len(running) > 1 { // keep the oldest
				del = append(del, running[1:]...)
			}
			return nil, del
		}
		if len(running) == 0 && run {
			return []string{node.Name}, del
		}
		return nil, append(del, c.surgeExtras(st, running)...)
	case exists:
		for _, p := range pods {
			if p.DeletionTimestamp == nil {
				del = append(del, p)
			}
		}
	}
	return nil, del
}

// surgeExtras: with surge, a node keeps its oldest new and oldest old pod;
// the old one goes once it is not ready or the new one is available.
func (c *Controller) surgeExtras(st *state, running []*corev1.Pod) []*corev1.Pod {
	var del []*corev1.Pod
	var newest, oldest *corev1.Pod
	for _, p := range running {
		if isUpdated(p, st.hash, st.gen) && newest == nil {
			newest = p
		} else if !isUpdated(p, st.hash, st.gen) && oldest == nil {
			oldest = p
		} else {
			del = append(del, p)
		}
	}
	if newest != nil && oldest != nil &&
		(!isReady(oldest) || isAvailable(newest, st.ds.Spec.MinReadySeconds, c.now())) {
		del = append(del, oldest)
	}
	return del
}

// syncNodes deletes del and creates one pod on each node of create.
func (c *Controller) syncNodes(ctx context.Context, st *state, del []*corev1.Pod, create []string) error {
	var errs []error
	seen := map[string]bool{}
	for _, p := range del {
		if seen[p.Name] {
			continue
		}
		seen[p.Name] = true
		errs = append(errs, c.deletePod(ctx, st, p))
	}
	for _, node := range create {
		errs = append(errs, c.createPod(ctx, st, node))
	}
	return errors.Join(errs...)
}

func (c *Controller) createPod(ctx context.Context, st *state, node string) error {
	pod := newPod(st.ds, node, st.hash)
	got, err := c.client.CoreV1().Pods(st.ds.Namespace).Create(ctx, pod, metav1.CreateOptions{})
	if err != nil {
		if apierrors.IsAlreadyExists(err) || apierrors.IsConflict(err) {
			return err
		}
		c.recorder.Eventf(st.ds, corev1.EventTypeWarning, reasonFailedCreate, "Error creating: %v", err)
		return fmt.Errorf("creating daemon pod on node %s: %w", node, err)
	}
	c.exp.created(st.key, got.Name)
	c.recorder.Eventf(st.ds, corev1.EventTypeNormal, reasonCreate, "Created pod: %v", got.Name)
	return nil
}

func (c *Controller) deletePod(ctx context.Context, st *state, p *corev1.Pod) error {
	err := c.client.CoreV1().Pods(p.Namespace).Delete(ctx, p.Name, metav1.DeleteOptions{
		Preconditions: &metav1.Preconditions{UID: &p.UID}})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		c.recorder.Eventf(st.ds, corev1.EventTypeWarning, reasonFailedDelete, "Error deleting: %v", err)
		return fmt.Errorf("deleting daemon pod %s: %w", p.Name, err)
	}
	c.exp.deleted(st.key, p.UID)
	c.recorder.Eventf(st.ds, corev1.EventTypeNormal, reasonDelete, "Deleted pod: %v", p.Name)
	return nil
}
