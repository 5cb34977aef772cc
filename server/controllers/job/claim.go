package job

import (
	"context"
	"fmt"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/orch/orch/server/controllers/replicaset"
)

// kind is what the Job's pods name as their controller.
var kind = batchv1.SchemeGroupVersion.WithKind("Job")

// claimPods returns the pods the Job controls, as upstream's getPodsForJob:
// its pods that stopped matching the selector are released (losing the
// tracking finalizer), orphans that match are adopted (gaining it).
func (c *Controller) claimPods(ctx context.Context, j *batchv1.Job) ([]*corev1.Pod, error) {
	sel, err := metav1.LabelSelectorAsSelector(j.Spec.Selector)
	if err != nil {
		return nil, fmt.Errorf("selector of job %s/%s: %w", j.Namespace, j.Name, err)
	}
	all, err := c.pods.Pods(j.Namespace).List(labelsAll)
	if err != nil {
		return nil, err
	}
	var candidates []*corev1.Pod
	for _, p := range all {
		if ref := metav1.GetControllerOfNoCopy(p); ref == nil || ref.UID == j.UID {
			candidates = append(candidates, p)
		}
	}
	api := c.client.CoreV1().Pods(j.Namespace)
	cl := &replicaset.Claimer{Owner: j, Kind: kind, Selector: sel, Finalizers: []string{trackingFinalizer},
		Fresh: func(ctx context.Context) (metav1.Object, error) {
			return c.client.BatchV1().Jobs(j.Namespace).Get(ctx, j.Name, metav1.GetOptions{})
		},
		Patch: func(ctx context.Context, name string, patch []byte) error {
			_, err := api.Patch(ctx, name, types.StrategicMergePatchType, patch, metav1.PatchOptions{})
			return err
		}}
	pods, err := replicaset.Claim(ctx, cl, candidates)
	for i, p := range pods {
		if ref := metav1.GetControllerOfNoCopy(p); ref == nil && !hasFinalizer(p) {
			pods[i] = p.DeepCopy() // adopted just now: it has the finalizer from here on
			pods[i].Finalizers = append(pods[i].Finalizers, trackingFinalizer)
		}
	}
	return pods, err
}

// releaseFinishedPods removes the tracking finalizer of a finished Job's
// pods that are done; the others lose it once they are.
func (c *Controller) releaseFinishedPods(ctx context.Context, j *batchv1.Job) error {
	all, err := c.pods.Pods(j.Namespace).List(labelsAll)
	if err != nil {
		return err
	}
	for _, p := range all {
		ref := metav1.GetControllerOfNoCopy(p)
		if ref == nil || ref.UID != j.UID || !hasFinalizer(p) || (!isTerminal(p) && p.DeletionTimestamp == nil) {
			continue
		}
		if err := c.removeFinalizer(ctx, p); err != nil {
			return err
		}
	}
	return nil
}
