package kubelet

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/orch/orch/agent/qos"
	"github.com/orch/orch/agent/runtime"
)

// terminate stops a deleted pod, reports its final phase (Succeeded when
// every container did, else Failed), removes everything it had on the node
// and then deletes the pod object for good (grace 0, UID precondition). A
// pod already finished keeps the status it has: its containers are gone
// on a second pass (a finalizer may keep the object).
func (k *Kubelet) terminate(ctx context.Context, pod *corev1.Pod, st *podState) error {
	k.stopPod(ctx, pod, gracePeriod(pod))
	if !terminal(pod) {
		_ = k.report(ctx, pod, st, nil, false)
	}
	if err := k.cleanupPod(ctx, pod.UID); err != nil {
		return err
	}
	err := k.cfg.Client.CoreV1().Pods(pod.Namespace).Delete(ctx, pod.Name, metav1.DeleteOptions{
		GracePeriodSeconds: new(int64), Preconditions: metav1.NewUIDPreconditions(string(pod.UID))})
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		return fmt.Errorf("deleting pod %s/%s: %w", pod.Namespace, pod.Name, err)
	}
	k.log.Info("pod terminated and removed", zap.String("pod", pod.Namespace+"/"+pod.Name))
	return nil
}

// finishPod handles a pod that reached Succeeded or Failed: running
// containers are stopped and its network released; containers (their logs)
// stay until the pod is deleted.
func (k *Kubelet) finishPod(ctx context.Context, pod *corev1.Pod, st *podState) error {
	k.stopPod(ctx, pod, gracePeriod(pod))
	if !pod.Spec.HostNetwork {
		if err := k.cfg.Network.TeardownPod(ctx, string(pod.UID)); err != nil {
			return fmt.Errorf("network teardown: %w", err)
		}
	}
	k.cfg.Probes.RemovePod(pod.UID)
	return nil
}

// stopPod stops the pod's running containers in parallel: preStop hook
// (when a PreStopper is configured), SIGTERM, grace, SIGKILL. Native
// sidecars stop only after the other containers, with the grace left, as
// kubelet does (KEP 753): their service stays up for the others' preStop
// hooks.
func (k *Kubelet) stopPod(ctx context.Context, pod *corev1.Pod, grace time.Duration) {
	list, err := k.cfg.Runtime.ListContainers(ctx, string(pod.UID))
	if err != nil {
		k.log.Warn("listing containers to stop failed", zap.Error(err))
		return
	}
	var others, sidecars []runtime.ContainerStatus
	for _, c := range list {
		switch spec := findContainer(pod, c.Name); {
		case c.State != runtime.StateRunning:
		case spec != nil && qos.IsRestartableInit(spec):
			sidecars = append(sidecars, c)
		default:
			others = append(others, c)
		}
	}
	end := time.Now().Add(grace)
	k.stopAll(ctx, pod, others, grace)
	k.stopAll(ctx, pod, sidecars, max(time.Until(end), 0))
}

// stopAll stops containers in parallel and waits for them.
func (k *Kubelet) stopAll(ctx context.Context, pod *corev1.Pod, list []runtime.ContainerStatus, grace time.Duration) {
	var wg sync.WaitGroup
	for _, c := range list {
		wg.Add(1)
		go func(c runtime.ContainerStatus) {
			defer wg.Done()
			k.stopContainer(ctx, pod, c, grace)
		}(c)
	}
	wg.Wait()
}

func (k *Kubelet) stopContainer(ctx context.Context, pod *corev1.Pod, c runtime.ContainerStatus, grace time.Duration) {
	k.cfg.Recorder.Eventf(pod, corev1.EventTypeNormal, "Killing", "Stopping container %s", c.Name)
	k.stop(ctx, pod, findContainer(pod, c.Name), c, pod.Status.PodIP, grace)
}

// killContainer stops one running container (liveness failure, failed
// postStart hook) with the pod's grace period; restartPolicy then decides.
func (k *Kubelet) killContainer(ctx context.Context, pod *corev1.Pod, spec *corev1.Container, c runtime.ContainerStatus, podIP, msg string) {
	k.cfg.Recorder.Event(pod, corev1.EventTypeNormal, "Killing", msg)
	k.stop(ctx, pod, spec, c, podIP, gracePeriod(pod))
}

// stop runs the preStop hook (when Hooks is set), then SIGTERM with the grace
// left, then SIGKILL.
func (k *Kubelet) stop(ctx context.Context, pod *corev1.Pod, spec *corev1.Container, c runtime.ContainerStatus, podIP string, grace time.Duration) {
	if k.cfg.Hooks != nil && spec != nil {
		grace = k.cfg.Hooks.PreStop(ctx, pod, spec, c.ID, podIP, grace)
	}
	if err := k.cfg.Runtime.StopContainer(ctx, c.ID, grace); err != nil {
		k.log.Warn("stopping container failed", zap.String("container", c.ID), zap.Error(err))
	}
}

func findContainer(pod *corev1.Pod, name string) *corev1.Container {
	for _, c := range allContainers(pod) {
		if c.Name == name {
			return c
		}
	}
	return nil
}

// cleanupPod removes everything the node holds for pod uid: containers,
// network, cgroup, volumes and the pod directory. It is idempotent.
func (k *Kubelet) cleanupPod(ctx context.Context, uid types.UID) error {
	var errs []error
	list, err := k.cfg.Runtime.ListContainers(ctx, string(uid))
	errs = append(errs, err)
	for _, c := range list {
		errs = append(errs, k.cfg.Runtime.RemoveContainer(ctx, c.ID))
	}
	k.cfg.Probes.RemovePod(uid)
	errs = append(errs, k.cfg.Network.TeardownPod(ctx, string(uid)))
	errs = append(errs, k.cfg.Cgroups.RemovePod(ctx, uid))
	errs = append(errs, k.cfg.Volumes.TeardownPod(ctx, uid))
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("cleaning up pod %s: %w", uid, err)
	}
	if err := os.RemoveAll(k.podDir(uid)); err != nil {
		return fmt.Errorf("cleaning up pod %s: %w", uid, err)
	}
	k.forget(uid)
	if k.cfg.PodCerts != nil {
		k.cfg.PodCerts.Forget(uid)
	}
	return nil
}
