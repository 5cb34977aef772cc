package kubelet

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"k8s.io/client-go/tools/cache"

	"github.com/orch/orch/agent/network"
	"github.com/orch/orch/agent/runtime"
	"github.com/orch/orch/agent/volumes"
)

var everything = labels.Everything()

// syncKey syncs the pod named by key and says when to look again.
func (k *Kubelet) syncKey(ctx context.Context, key string) (time.Duration, error) {
	ns, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return 0, nil
	}
	pod, err := k.lister.Pods(ns).Get(name)
	k.mu.Lock()
	oldUID := k.byKey[key]
	k.mu.Unlock()
	if apierrors.IsNotFound(err) {
		if oldUID != "" {
			k.log.Info("pod is gone from the API; cleaning up", zap.String("pod", key))
			return 0, k.cleanupPod(ctx, oldUID)
		}
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	if oldUID != "" && oldUID != pod.UID {
		if err := k.cleanupPod(ctx, oldUID); err != nil {
			return 0, err
		}
	}
	pod = pod.DeepCopy()
	st := k.state(pod)
	st.freshen(pod)
	if pod.DeletionTimestamp != nil {
		return 0, k.terminate(ctx, pod, st)
	}
	if terminal(pod) {
		return 0, k.finishPod(ctx, pod, st)
	}
	return k.syncPod(ctx, pod, st)
}

// syncPod runs seed 000's order for a live pod.
func (k *Kubelet) syncPod(ctx context.Context, pod *corev1.Pod, st *podState) (time.Duration, error) {
	if !st.admitted {
		if rej := admit(pod, k.admittedPods(pod), k.cfg.Allocatable); rej != nil {
			k.cfg.Recorder.Event(pod, corev1.EventTypeWarning, rej.Reason, rej.Message)
			return 0, k.failPod(ctx, pod, st, rej.Reason, rej.Message)
		}
		st.admitted = true
	}
	k.allocate(pod, st)
	alloc := withResources(pod, st.allocated)
	if left, over := k.deadline(pod); over {
		k.cfg.Recorder.Event(pod, corev1.EventTypeNormal, "DeadlineExceeded", "Pod was active on the node longer than the specified deadline")
		k.stopPod(ctx, pod, 0)
		return 0, k.failPod(ctx, pod, st, "DeadlineExceeded", "Pod was active on the node longer than the specified deadline")
	} else if left > 0 {
		defer k.queue.AddAfter(st.key, left)
	}
	pullWait := k.ensureImages(ctx, pod, st)
	env, err := k.prepare(ctx, alloc, st)
	if err != nil {
		_ = k.report(ctx, pod, st, nil, false)
		return 0, err
	}
	waits, after := k.runContainers(ctx, alloc, st, env)
	if pullWait > 0 && (after == 0 || pullWait < after) {
		after = pullWait
	}
	return after, k.report(ctx, pod, st, waits, true)
}

// podEnv is what containers of a pod are created with.
type podEnv struct {
	volumes map[string]volumes.Volume
	files   podFiles
	netns   string
	parent  string // pod cgroup
}

// prepare does storage, network, pod files and compute, in this order.
func (k *Kubelet) prepare(ctx context.Context, pod *corev1.Pod, st *podState) (*podEnv, error) {
	env := &podEnv{}
	var err error
	if env.volumes, err = k.cfg.Volumes.SetupPod(ctx, pod); err != nil {
		k.cfg.Recorder.Eventf(pod, corev1.EventTypeWarning, "FailedMount", "Unable to set up volumes: %v", err)
		return nil, fmt.Errorf("volumes: %w", err)
	}
	if pod.Spec.HostNetwork {
		st.podIP = k.cfg.HostIP
	} else {
		ns, err := k.cfg.Network.SetupPod(ctx, network.PodNet{ID: string(pod.UID), Name: pod.Name, Namespace: pod.Namespace, Hostname: pod.Name,
			Ports: podPortMappings(pod)})
		if err != nil {
			k.cfg.Recorder.Eventf(pod, corev1.EventTypeWarning, "FailedCreatePodSandBox", "Failed to create pod network: %v", err)
			return nil, fmt.Errorf("network: %w", err)
		}
		st.podIP, env.netns = ns.IP.IP.String(), ns.NetnsPath
	}
	if env.files, err = writePodFiles(k.podDir(pod.UID), pod, st.podIP, k.cfg.DNS); err != nil {
		return nil, err
	}
	if env.parent, err = k.cfg.Cgroups.EnsurePod(pod); err != nil {
		return nil, fmt.Errorf("pod cgroup: %w", err)
	}
	return env, nil
}

// report computes the pod status and writes it when it changed.
func (k *Kubelet) report(ctx context.Context, pod *corev1.Pod, st *podState, waits map[string]waiting, netDone bool) error {
	list, err := k.cfg.Runtime.ListContainers(ctx, string(pod.UID))
	if err != nil {
		return fmt.Errorf("listing containers: %w", err)
	}
	views := groupContainers(list)
	running := map[string]runtime.ContainerStatus{}
	for name, v := range views {
		if v.running() {
			running[name] = *v.latest
		}
	}
	k.cfg.Probes.SyncPod(pod, st.podIP, running)
	if waits == nil {
		waits = k.pullWaits(st)
	}
	status := computeStatus(&statusInput{pod: pod, views: views, waiting: waits, images: st.images,
		messages: k.terminationMessages(pod, st, views), probes: k.cfg.Probes, allocated: st.allocated, resize: st.resize,
		podIP: st.podIP, hostIP: k.cfg.HostIP, netDone: netDone, now: k.cfg.Now(), deleted: pod.DeletionTimestamp != nil})
	return k.writeStatus(ctx, pod, st, status)
}

// writeStatus patches the pod's status from what the cache holds (or this
// agent's last write, when newer: see podState.freshen) to status, as
// kubelet's status manager does: a strategic merge patch of the status
// subresource with the pod's UID as precondition and no resourceVersion,
// so a cache a write behind does not turn every status change of a
// starting pod into a conflict and a retry after backoff.
func (k *Kubelet) writeStatus(ctx context.Context, pod *corev1.Pod, st *podState, status corev1.PodStatus) error {
	if equality.Semantic.DeepEqual(pod.Status, status) {
		return nil
	}
	patch, err := statusPatch(pod.UID, pod.Status, status)
	if err != nil {
		return fmt.Errorf("status patch of pod %s/%s: %w", pod.Namespace, pod.Name, err)
	}
	got, err := k.cfg.Client.CoreV1().Pods(pod.Namespace).Patch(ctx, pod.Name, types.StrategicMergePatchType, patch,
		metav1.PatchOptions{}, "status")
	if err != nil {
		st.written = nil // unknown what landed: go back to the informer's copy
		return fmt.Errorf("updating status of pod %s/%s: %w", pod.Namespace, pod.Name, err)
	}
	st.wrote(got)
	pod.Status = status
	return nil
}

// statusPatch is upstream's preparePatchBytesForPodStatus: the two-way
// strategic merge patch from old to new, carrying metadata.uid so that it
// cannot land on another pod of the same name.
func statusPatch(uid types.UID, from, to corev1.PodStatus) ([]byte, error) {
	oldData, err := json.Marshal(corev1.Pod{Status: from})
	if err != nil {
		return nil, err
	}
	newData, err := json.Marshal(corev1.Pod{ObjectMeta: metav1.ObjectMeta{UID: uid}, Status: to})
	if err != nil {
		return nil, err
	}
	return strategicpatch.CreateTwoWayMergePatch(oldData, newData, corev1.Pod{})
}

// failPod makes the pod Failed with reason and message (admission,
// deadline), keeping the container statuses.
func (k *Kubelet) failPod(ctx context.Context, pod *corev1.Pod, st *podState, reason, msg string) error {
	list, _ := k.cfg.Runtime.ListContainers(ctx, string(pod.UID))
	views := groupContainers(list)
	status := computeStatus(&statusInput{pod: pod, views: views, waiting: map[string]waiting{}, images: st.images,
		messages: k.terminationMessages(pod, st, views), probes: k.cfg.Probes, allocated: st.allocated,
		podIP: st.podIP, hostIP: k.cfg.HostIP, now: k.cfg.Now()})
	status.Phase, status.Reason, status.Message = corev1.PodFailed, reason, msg
	for i := range status.Conditions {
		if status.Conditions[i].Type == corev1.PodReady || status.Conditions[i].Type == corev1.ContainersReady {
			status.Conditions[i].Status, status.Conditions[i].Reason = corev1.ConditionFalse, "PodFailed"
		}
	}
	return k.writeStatus(ctx, pod, st, status)
}

// deadline reports the time left of activeDeadlineSeconds, or that it passed.
func (k *Kubelet) deadline(pod *corev1.Pod) (time.Duration, bool) {
	if pod.Spec.ActiveDeadlineSeconds == nil || pod.Status.StartTime == nil {
		return 0, false
	}
	end := pod.Status.StartTime.Add(time.Duration(*pod.Spec.ActiveDeadlineSeconds) * time.Second)
	left := end.Sub(k.cfg.Now())
	return left, left <= 0
}
