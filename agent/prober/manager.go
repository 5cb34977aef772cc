package prober

import (
	"context"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
)

// updatesBuffer is how many result changes may wait for the loop before
// workers block (kubelet uses 20).
const updatesBuffer = 64

// Running is a running container as the loop knows it.
type Running struct {
	ID        string
	StartedAt time.Time // zero = now
}

// Manager runs the probes of the pods on this node and keeps their results.
// It is safe for concurrent use.
type Manager struct {
	log     *zap.Logger
	exec    ExecFunc
	rec     Recorder
	clock   Clock
	client  *http.Client
	updates chan Update
	metrics *Metrics

	// sleeping counts workers waiting for their next probe time; tests use it
	// to know all due work is done.
	sleeping atomic.Int32

	mu     sync.Mutex
	pods   map[types.UID]*podState
	closed bool
	wg     sync.WaitGroup
}

type podState struct {
	pod        *v1.Pod
	ip         string
	containers map[string]*containerState
}

// containerState is one running container (one container ID) and the
// results of its probes. A restarted container gets a new one.
type containerState struct {
	uid       types.UID
	name      string
	id        string
	spec      *v1.Container
	startedAt time.Time
	probes    [numKinds]*v1.Probe
	results   [numKinds]Result
	started   chan struct{} // closed once started (startup probe succeeded or none)
	startOnce sync.Once
	ctx       context.Context
	cancel    context.CancelFunc
}

// markStarted lets the liveness and readiness workers run.
func (cs *containerState) markStarted() { cs.startOnce.Do(func() { close(cs.started) }) }

// New returns a Manager; call Stop to end its workers.
func New(log *zap.Logger, deps Deps) *Manager {
	m := &Manager{
		log:     log.Named("prober"),
		exec:    deps.Exec,
		rec:     deps.Recorder,
		clock:   deps.Clock,
		client:  NewHTTPClient(),
		updates: make(chan Update, updatesBuffer),
		metrics: deps.Metrics,
		pods:    map[types.UID]*podState{},
	}
	if m.rec == nil {
		m.rec = nopRecorder{}
	}
	if m.clock == nil {
		m.clock = clock.RealClock{}
	}
	return m
}

// Updates delivers every change of a probe result. The loop should re-sync
// the pod; a liveness or startup Failure means the container must be killed
// and restarted per restartPolicy.
func (m *Manager) Updates() <-chan Update { return m.updates }

// AddPod is SyncPod with containerIDs (container name → ID) as the running
// containers, all started now.
func (m *Manager) AddPod(pod *v1.Pod, containerIDs map[string]string, podIP string) {
	running := make(map[string]Running, len(containerIDs))
	for name, id := range containerIDs {
		running[name] = Running{ID: id}
	}
	m.SyncPod(pod, podIP, running)
}

// SyncPod is level-based: it records pod and its IP, and makes the probed
// containers exactly those in running. A container whose ID changed starts
// afresh; one absent from running stops being probed (not ready, not
// started). Calling it again with the same arguments changes nothing.
func (m *Manager) SyncPod(pod *v1.Pod, podIP string, running map[string]Running) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return
	}
	ps := m.podLocked(pod, podIP)
	for _, c := range probedContainers(pod) {
		r := running[c.Name]
		m.setContainerLocked(ps, c, r.ID, r.StartedAt)
	}
}

// UpdateContainer reports that container name of pod now runs as id since
// started (zero = now), or is not running when id is "". A new ID resets the
// container's probe state; the same ID changes nothing.
func (m *Manager) UpdateContainer(pod *v1.Pod, name, id string, started time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return
	}
	ps, ok := m.pods[pod.UID]
	ip := ""
	if ok {
		ip = ps.ip
	}
	ps = m.podLocked(pod, ip)
	for _, c := range probedContainers(pod) {
		if c.Name == name {
			m.setContainerLocked(ps, c, id, started)
		}
	}
}

// RemovePod stops the pod's workers and forgets its results.
func (m *Manager) RemovePod(uid types.UID) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if ps, ok := m.pods[uid]; ok {
		for _, cs := range ps.containers {
			cs.cancel()
		}
		delete(m.pods, uid)
	}
	m.metrics.forget(uid)
}

// Stop ends all workers and waits for them. The Manager does nothing after.
func (m *Manager) Stop() {
	m.mu.Lock()
	m.closed = true
	for uid, ps := range m.pods {
		for _, cs := range ps.containers {
			cs.cancel()
		}
		delete(m.pods, uid)
	}
	m.mu.Unlock()
	m.wg.Wait()
}

// podLocked records the latest pod object and IP.
func (m *Manager) podLocked(pod *v1.Pod, ip string) *podState {
	ps, ok := m.pods[pod.UID]
	if !ok {
		ps = &podState{containers: map[string]*containerState{}}
		m.pods[pod.UID] = ps
	}
	ps.pod, ps.ip = pod, ip
	if pod.DeletionTimestamp != nil {
		m.terminatingLocked(ps)
	}
	return ps
}

// probedContainers are the pod's containers and its sidecars (restartable
// init containers), the ones kubelet probes.
func probedContainers(pod *v1.Pod) []*v1.Container {
	var out []*v1.Container
	for i := range pod.Spec.InitContainers {
		c := &pod.Spec.InitContainers[i]
		if c.RestartPolicy != nil && *c.RestartPolicy == v1.ContainerRestartPolicyAlways {
			out = append(out, c)
		}
	}
	for i := range pod.Spec.Containers {
		out = append(out, &pod.Spec.Containers[i])
	}
	return out
}
