package job

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
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

// isPodFailed: Failed, or (unless spec.podReplacementPolicy is Failed)
// deleted before it succeeded, as upstream counts pods that never get to
// report a phase.
func isPodFailed(p *corev1.Pod, j *batchv1.Job) bool {
	if p.Status.Phase == corev1.PodFailed {
		return true
	}
	if onlyReplaceFailed(j) {
		return false
	}
	return p.DeletionTimestamp != nil && p.Status.Phase != corev1.PodSucceeded
}

// onlyReplaceFailed: spec.podReplacementPolicy Failed, a deleted pod is
// replaced only once it is Failed.
func onlyReplaceFailed(j *batchv1.Job) bool {
	return ptr.Deref(j.Spec.PodReplacementPolicy, batchv1.TerminatingOrFailed) == batchv1.Failed
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
		if podReady(p) {
			n++
		}
	}
	return n
}

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// removeFinalizers drops the tracking finalizer from pods and returns the
// uids it is gone from (a pod already deleted counts); the removals are
// expected, so a cache that still shows the finalizer does not count a pod
// twice.
func (c *Controller) removeFinalizers(ctx context.Context, s *jobState, pods []*corev1.Pod) (sets.Set[types.UID], error) {
	done := sets.New[types.UID]()
	var errs []error
	for _, p := range pods {
		c.exp.expectFinalizerRemoval(s.key, s.job.UID, p.UID)
		if err := c.removeFinalizer(ctx, p); err != nil {
			c.exp.finalizerRemoved(s.key, s.job.UID, p.UID)
			errs = append(errs, err)
			continue
		}
		done.Insert(p.UID)
	}
	return done, errors.Join(errs...)
}

// removeFinalizer patches the finalizer away (JSON patch with a test of the
// list, so a concurrent change of the finalizers makes it retry).
func (c *Controller) removeFinalizer(ctx context.Context, p *corev1.Pod) error {
	return c.patchOutFinalizer(ctx, p, false)
}

// patchOutFinalizer removes the tracking finalizer; with pinned, only from
// the very version p is (a Job may adopt an orphan meanwhile).
func (c *Controller) patchOutFinalizer(ctx context.Context, p *corev1.Pod, pinned bool) error {
	if !hasFinalizer(p) {
		return nil
	}
	keep := []string{}
	for _, f := range p.Finalizers {
		if f != trackingFinalizer {
			keep = append(keep, f)
		}
	}
	ops := []map[string]any{
		{"op": "test", "path": "/metadata/finalizers", "value": p.Finalizers},
		{"op": "replace", "path": "/metadata/finalizers", "value": keep},
	}
	if pinned {
		ops = append([]map[string]any{{"op": "test", "path": "/metadata/resourceVersion", "value": p.ResourceVersion}}, ops...)
	}
	patch, err := json.Marshal(ops)
	if err != nil {
		return err
	}
	_, err = c.client.CoreV1().Pods(p.Namespace).Patch(ctx, p.Name, types.JSONPatchType, patch, metav1.PatchOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("remove finalizer of pod %s/%s: %w", p.Namespace, p.Name, err)
	}
	return nil
}

// deletePods deletes pods (with dropFinalizer, after removing their
// tracking finalizer, so they are not counted as failed: upstream's
// deleteJobPods) and moves them from s.active to the terminating ones. It
// returns how many it deleted.
func (c *Controller) deletePods(ctx context.Context, s *jobState, pods []*corev1.Pod, dropFinalizer bool) (int, error) {
	var errs []error
	gone := map[types.UID]bool{}
	for _, p := range pods {
		if err := c.deletePod(ctx, s, p, dropFinalizer); err != nil {
			errs = append(errs, err)
			continue
		}
		gone[p.UID] = true
		s.terminating++
		if podReady(p) {
			s.ready--
		}
	}
	s.active = slices.DeleteFunc(slices.Clone(s.active), func(p *corev1.Pod) bool { return gone[p.UID] })
	return len(gone), errors.Join(errs...)
}

func (c *Controller) deletePod(ctx context.Context, s *jobState, p *corev1.Pod, dropFinalizer bool) error {
	c.exp.expectDelete(s.key, s.job.UID, p.UID)
	if dropFinalizer {
		if err := c.removeFinalizer(ctx, p); err != nil {
			c.exp.observeDeleting(s.key, s.job.UID, p.UID)
			return err
		}
	}
	err := c.client.CoreV1().Pods(p.Namespace).Delete(ctx, p.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &p.UID}})
	if err != nil {
		c.exp.observeDeleting(s.key, s.job.UID, p.UID) // no event will come
		if !apierrors.IsNotFound(err) {
			return fmt.Errorf("delete pod %s/%s: %w", p.Namespace, p.Name, err)
		}
		return nil
	}
	c.recorder.Eventf(s.job, corev1.EventTypeNormal, "SuccessfulDelete", "Deleted pod: %v", p.Name)
	return nil
}

// createPod creates one pod for the Job (index < 0: NonIndexed); with
// backoffLimitPerIndex it carries the failure counts of its index.
func (c *Controller) createPod(ctx context.Context, s *jobState, index int) error {
	pod := newPod(s.job, index)
	if index >= 0 && hasBackoffLimitPerIndex(s.job) {
		counted, ignored := replacementCounts(s.job, s.delayed[index])
		pod.Annotations[failureCountAnnotation] = strconv.Itoa(int(counted))
		if ignored > 0 {
			pod.Annotations[ignoredCountAnnotation] = strconv.Itoa(int(ignored))
		}
	}
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

func completionsOf(j *batchv1.Job) int {
	if j.Spec.Completions == nil {
		return 0
	}
	return int(*j.Spec.Completions)
}
