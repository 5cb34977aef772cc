package kubelet

import (
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/orch/orch/agent/runtime"
)

// podState is what the worker remembers of a pod between syncs. Everything
// else is read again from the API (the pod) and the runtime (containers).
type podState struct {
	uid      types.UID
	key      string
	admitted bool
	podIP    string
	images   map[string]ImageInfo // by container name
	// pulledFor is the spec image each entry of images was pulled for;
	// redefined marks running containers killed because their spec image
	// changed, to be started again whatever the restart policy.
	pulledFor map[string]string
	redefined map[string]bool
	pull      map[string]*pullState
	// fresh marks images pulled since the container's last start (pull
	// policy Always pulls again before the next one).
	fresh map[string]bool
	// messages caches termination messages of exited containers by ID.
	messages map[string]string
	once     map[string]bool // events recorded once per pod
	// allocated are the resources the agent accepted per container name
	// (the spec's, unless a resize is pending); nil until admitted.
	allocated map[string]corev1.ResourceRequirements
	// applied are the cgroup limits last given to each running container,
	// by container ID.
	applied map[string]runtime.Resources
	// resize holds the PodResizePending or PodResizeInProgress condition
	// of a resize not yet done.
	resize []corev1.PodCondition
	// written is the pod status the last status patch returned, at
	// resourceVersion writtenRV: the informer's copy may lag behind it.
	written   *corev1.PodStatus
	writtenRV uint64
}

// freshen gives pod the status this agent last wrote when the informer's
// copy is older than that write. A status patch computed from a stale
// base omits the fields that base already had at their new value (a
// Ready condition back to False after it was written True), so they
// would keep the value of the write in between; upstream's status manager
// reads the pod from the API server before every patch for this reason.
func (st *podState) freshen(pod *corev1.Pod) {
	if st.written == nil {
		return
	}
	if rv, err := strconv.ParseUint(pod.ResourceVersion, 10, 64); err == nil && rv >= st.writtenRV {
		st.written = nil // the informer has caught up: its copy is the truth
		return
	}
	pod.Status = *st.written.DeepCopy()
}

// wrote records the status a patch returned.
func (st *podState) wrote(pod *corev1.Pod) {
	rv, err := strconv.ParseUint(pod.ResourceVersion, 10, 64)
	if err != nil {
		st.written = nil
		return
	}
	st.written, st.writtenRV = pod.Status.DeepCopy(), rv
}

// pullState is the back-off of a failing image pull.
type pullState struct {
	failures int
	failedAt time.Time
	retryAt  time.Time
	err      string
}

func (k *Kubelet) state(pod *corev1.Pod) *podState {
	k.mu.Lock()
	defer k.mu.Unlock()
	st := k.pods[pod.UID]
	if st == nil {
		st = &podState{uid: pod.UID, key: pod.Namespace + "/" + pod.Name, images: map[string]ImageInfo{},
			pull: map[string]*pullState{}, once: map[string]bool{}, fresh: map[string]bool{}, messages: map[string]string{},
			applied: map[string]runtime.Resources{}, pulledFor: map[string]string{}, redefined: map[string]bool{}}
		k.pods[pod.UID] = st
	}
	k.byKey[st.key] = pod.UID
	return st
}

func (k *Kubelet) forget(uid types.UID) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if st := k.pods[uid]; st != nil && k.byKey[st.key] == uid {
		delete(k.byKey, st.key)
	}
	delete(k.pods, uid)
}

// admittedPods are the pods whose resources count against allocatable: the
// admitted, non-terminal pods bound here other than pod.
func (k *Kubelet) admittedPods(pod *corev1.Pod) []*corev1.Pod {
	all, _ := k.lister.List(everything)
	k.mu.Lock()
	defer k.mu.Unlock()
	var out []*corev1.Pod
	for _, p := range all {
		if p.UID == pod.UID || terminal(p) {
			continue
		}
		if st := k.pods[p.UID]; st != nil && st.admitted {
			out = append(out, p)
		}
	}
	return out
}

func terminal(p *corev1.Pod) bool {
	return p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed
}
