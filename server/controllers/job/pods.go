package job

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
)

// trackingFinalizer keeps a Job's finished pods until they are counted.
const trackingFinalizer = batchv1.JobTrackingFinalizer

// maxBurst bounds the pods one sync creates (upstream's MaxPodCreateDeletePerSync).
const maxBurst = 500

func hasFinalizer(p *corev1.Pod) bool { return slices.Contains(p.Finalizers, trackingFinalizer) }

func isTerminal(p *corev1.Pod) bool {
	return p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed
}

// podFailed: Failed, or deleted before it succeeded (upstream counts
// deleted pods as failures with podReplacementPolicy TerminatingOrFailed).
func podFailed(p *corev1.Pod) bool {
	return p.Status.Phase == corev1.PodFailed || (p.DeletionTimestamp != nil && p.Status.Phase != corev1.PodSucceeded)
}

// controlledPods lists the pods whose controller is j.
func (c *Controller) controlledPods(j *batchv1.Job) ([]*corev1.Pod, error) {
	sel := labelsAll
	if j.Spec.Selector != nil {
		var err error
		if sel, err = metav1.LabelSelectorAsSelector(j.Spec.Selector); err != nil {
			return nil, fmt.Errorf("selector of job %s/%s: %w", j.Namespace, j.Name, err)
		}
	}
	all, err := c.pods.Pods(j.Namespace).List(sel)
	if err != nil {
		return nil, err
	}
	var out []*corev1.Pod
	for _, p := range all {
		if ref := metav1.GetControllerOf(p); ref != nil && ref.UID == j.UID {
			out = append(out, p)
		}
	}
	return out, nil
}

func activePods(pods []*corev1.Pod) []*corev1.Pod {
	var out []*corev1.Pod
	for _, p := range pods {
		if !isTerminal(p) && p.DeletionTimestamp == nil {
			out = append(out, p)
		}
	}
	return out
}

// donePods are the finished or terminating pods that still hold the finalizer.
func donePods(pods []*corev1.Pod) []*corev1.Pod {
	var out []*corev1.Pod
	for _, p := range pods {
		if hasFinalizer(p) && (isTerminal(p) || p.DeletionTimestamp != nil) {
			out = append(out, p)
		}
	}
	return out
}

func terminatingCount(pods []*corev1.Pod) int {
	n := 0
	for _, p := range pods {
		if p.DeletionTimestamp != nil && !isTerminal(p) {
			n++
		}
	}
	return n
}

func readyCount(pods []*corev1.Pod) int32 {
	var n int32
	for _, p := range pods {
		for _, c := range p.Status.Conditions {
			if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue {
				n++
			}
		}
	}
	return n
}

func restartCount(pods []*corev1.Pod) int32 {
	var n int32
	for _, p := range pods {
		for _, cs := range p.Status.InitContainerStatuses {
			n += cs.RestartCount
		}
		for _, cs := range p.Status.ContainerStatuses {
			n += cs.RestartCount
		}
	}
	return n
}

// removeFinalizers drops the tracking finalizer from pods.
func (c *Controller) removeFinalizers(ctx context.Context, pods []*corev1.Pod) error {
	for _, p := range pods {
		if err := c.removeFinalizer(ctx, p); err != nil {
			return err
		}
	}
	return nil
}

// removeFinalizer patches the finalizer away (JSON patch with a test of the
// list, so a concurrent change of the finalizers makes it retry).
func (c *Controller) removeFinalizer(ctx context.Context, p *corev1.Pod) error {
	if !hasFinalizer(p) {
		return nil
	}
	keep := []string{}
	for _, f := range p.Finalizers {
		if f != trackingFinalizer {
			keep = append(keep, f)
		}
	}
	patch, err := json.Marshal([]map[string]any{
		{"op": "test", "path": "/metadata/finalizers", "value": p.Finalizers},
		{"op": "replace", "path": "/metadata/finalizers", "value": keep},
	})
	if err != nil {
		return err
	}
	_, err = c.client.CoreV1().Pods(p.Namespace).Patch(ctx, p.Name, types.JSONPatchType, patch, metav1.PatchOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("remove finalizer of pod %s/%s: %w", p.Namespace, p.Name, err)
	}
	return nil
}

// deletePods deletes pods and takes them off s.active.
func (c *Controller) deletePods(ctx context.Context, s *jobState, pods []*corev1.Pod) error {
	var firstErr error
	gone := map[types.UID]bool{}
	for _, p := range pods {
		c.exp.expectDelete(s.key, s.job.UID, p.UID)
		err := c.client.CoreV1().Pods(p.Namespace).Delete(ctx, p.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &p.UID}})
		if apierrors.IsNotFound(err) {
			c.exp.observeDeleting(s.key, s.job.UID, p.UID) // already gone: no event will come
		} else if err != nil {
			c.exp.observeDeleting(s.key, s.job.UID, p.UID)
			if firstErr == nil {
				firstErr = fmt.Errorf("delete pod %s/%s: %w", p.Namespace, p.Name, err)
			}
			continue
		}
		gone[p.UID] = true
		s.deleting++
		c.recorder.Eventf(s.job, corev1.EventTypeNormal, "SuccessfulDelete", "Deleted pod: %v", p.Name)
	}
	s.active = slices.DeleteFunc(slices.Clone(s.active), func(p *corev1.Pod) bool { return gone[p.UID] })
	return firstErr
}

// createPod creates one pod for j (index < 0: NonIndexed).
func (c *Controller) createPod(ctx context.Context, s *jobState, index int) error {
	pod := newPod(s.job, index)
	out, err := c.client.CoreV1().Pods(pod.Namespace).Create(ctx, pod, metav1.CreateOptions{})
	if err != nil {
		c.exp.lowerAdd(s.key, s.job.UID)
		if apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause) {
			return nil
		}
		c.recorder.Eventf(s.job, corev1.EventTypeWarning, "FailedCreate", "Error creating: %v", err)
		return fmt.Errorf("create pod for job %s: %w", s.key, err)
	}
	s.active = append(s.active, out)
	c.recorder.Eventf(s.job, corev1.EventTypeNormal, "SuccessfulCreate", "Created pod: %v", out.Name)
	return nil
}

// newPod builds a pod from j's template, as upstream's job controller does.
func newPod(j *batchv1.Job, index int) *corev1.Pod {
	tpl := j.Spec.Template.DeepCopy()
	pod := &corev1.Pod{ObjectMeta: tpl.ObjectMeta, Spec: tpl.Spec}
	pod.Name, pod.Namespace, pod.GenerateName = "", j.Namespace, j.Name+"-"
	pod.Finalizers = append(pod.Finalizers, trackingFinalizer)
	pod.OwnerReferences = []metav1.OwnerReference{*metav1.NewControllerRef(j, batchv1.SchemeGroupVersion.WithKind("Job"))}
	if index < 0 {
		return pod
	}
	idx := strconv.Itoa(index)
	pod.GenerateName = fmt.Sprintf("%s-%d-", j.Name, index)
	if pod.Annotations == nil {
		pod.Annotations = map[string]string{}
	}
	pod.Annotations[batchv1.JobCompletionIndexAnnotation] = idx
	if pod.Labels == nil {
		pod.Labels = map[string]string{}
	}
	pod.Labels[batchv1.JobCompletionIndexAnnotation] = idx
	if pod.Spec.Hostname == "" {
		pod.Spec.Hostname = fmt.Sprintf("%s-%d", j.Name, index)
	}
	env := corev1.EnvVar{Name: "JOB_COMPLETION_INDEX", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{
		FieldPath: fmt.Sprintf("metadata.annotations['%s']", batchv1.JobCompletionIndexAnnotation)}}}
	for i := range pod.Spec.InitContainers {
		pod.Spec.InitContainers[i].Env = append(pod.Spec.InitContainers[i].Env, env)
	}
	for i := range pod.Spec.Containers {
		pod.Spec.Containers[i].Env = append(pod.Spec.Containers[i].Env, env)
	}
	return pod
}

// podIndex is the completion index of an Indexed Job's pod, -1 if none.
func podIndex(p *corev1.Pod, completions int32) int {
	v, ok := p.Annotations[batchv1.JobCompletionIndexAnnotation]
	if !ok {
		return -1
	}
	i, err := strconv.Atoi(v)
	if err != nil || i < 0 || int32(i) >= completions {
		return -1
	}
	return i
}

func isIndexed(j *batchv1.Job) bool {
	return ptr.Deref(j.Spec.CompletionMode, batchv1.NonIndexedCompletion) == batchv1.IndexedCompletion
}
