package runtime

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"time"
)

// Fake is an in-memory Interface for agent-loop tests. Containers move
// through the states on the calls; tests end them with Exit and script exec
// results with ExecFunc.
type Fake struct {
	mu         sync.Mutex
	containers map[string]*fakeContainer
	now        func() time.Time
	// ExecFunc, when set, answers Exec; the default returns exit code 0.
	ExecFunc func(id string, req ExecRequest) (int, error)
	// AttachFunc, when set, answers Attach; the default returns at once.
	AttachFunc func(id string, req AttachRequest) error
	// Calls records the operations in order ("create <id>", "start <id>", ...).
	Calls []string
}

type fakeContainer struct {
	spec   ContainerSpec
	status ContainerStatus
}

var _ Interface = (*Fake)(nil)

// NewFake returns an empty Fake.
func NewFake() *Fake { return &Fake{containers: map[string]*fakeContainer{}, now: time.Now} }

func (f *Fake) record(op, id string) { f.Calls = append(f.Calls, op+" "+id) }

// CreateContainer records a created container.
func (f *Fake) CreateContainer(_ context.Context, s ContainerSpec) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.record("create", s.ID)
	if _, ok := f.containers[s.ID]; ok {
		return fmt.Errorf("create container %s: already exists", s.ID)
	}
	f.containers[s.ID] = &fakeContainer{spec: s, status: ContainerStatus{
		ID: s.ID, PodUID: s.PodUID, PodName: s.PodName, PodNamespace: s.PodNamespace, Name: s.Name,
		RestartCount: s.RestartCount, Image: s.Image, State: StateCreated, CreatedAt: f.now(), LogPath: s.LogPath}}
	return nil
}

func (f *Fake) get(id string) (*fakeContainer, error) {
	c, ok := f.containers[id]
	if !ok {
		return nil, fmt.Errorf("container %s: %w", id, ErrNotFound)
	}
	return c, nil
}

// StartContainer marks the container running.
func (f *Fake) StartContainer(_ context.Context, id string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.record("start", id)
	c, err := f.get(id)
	if err != nil {
		return err
	}
	if c.status.State != StateCreated {
		return fmt.Errorf("start %s: state is %s", id, c.status.State)
	}
	c.status.State, c.status.StartedAt, c.status.Pid = StateRunning, f.now(), 1
	return nil
}

// StopContainer ends a running container with exit code 137 (SIGKILL) or
// 143 (SIGTERM honored) — the fake always reports 143 when grace > 0.
func (f *Fake) StopContainer(_ context.Context, id string, grace time.Duration) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.record("stop", id)
	c, err := f.get(id)
	if err != nil {
		return err
	}
	if c.status.State == StateRunning {
		code := 137
		if grace > 0 {
			code = 143
		}
		f.exit(c, code)
	}
	return nil
}

func (f *Fake) exit(c *fakeContainer, code int) {
	c.status.State, c.status.ExitCode, c.status.FinishedAt, c.status.Pid = StateExited, code, f.now(), 0
}

// Exit makes a running container exit with code (test hook).
func (f *Fake) Exit(id string, code int, oomKilled bool) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	c, err := f.get(id)
	if err != nil {
		return err
	}
	f.exit(c, code)
	c.status.OOMKilled = oomKilled
	return nil
}

// RemoveContainer forgets the container; a missing one is success.
func (f *Fake) RemoveContainer(_ context.Context, id string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.record("remove", id)
	delete(f.containers, id)
	return nil
}

// ContainerStatus returns the recorded status.
func (f *Fake) ContainerStatus(_ context.Context, id string) (ContainerStatus, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	c, err := f.get(id)
	if err != nil {
		return ContainerStatus{}, err
	}
	return c.status, nil
}

// Spec returns the spec a container was created with (test hook).
func (f *Fake) Spec(id string) (ContainerSpec, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	c, ok := f.containers[id]
	if !ok {
		return ContainerSpec{}, false
	}
	return c.spec, true
}

// ListContainers lists containers of podUID (all when ""), sorted by ID.
func (f *Fake) ListContainers(_ context.Context, podUID string) ([]ContainerStatus, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []ContainerStatus
	for _, c := range f.containers {
		if podUID == "" || c.status.PodUID == podUID {
			out = append(out, c.status)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}

// TaskStates reports every container's state (the fake has no tasks apart).
func (f *Fake) TaskStates(context.Context) (map[string]State, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make(map[string]State, len(f.containers))
	for id, c := range f.containers {
		out[id] = c.status.State
	}
	return out, nil
}

// Exec answers with ExecFunc, or exit code 0; the container must run.
func (f *Fake) Exec(_ context.Context, id string, req ExecRequest) (int, error) {
	f.mu.Lock()
	c, err := f.get(id)
	fn := f.ExecFunc
	if err == nil {
		f.record("exec", id)
	}
	f.mu.Unlock()
	if err != nil {
		return -1, err
	}
	if c.status.State != StateRunning {
		return -1, fmt.Errorf("exec in %s: container not running", id)
	}
	if fn != nil {
		return fn(id, req)
	}
	return 0, nil
}

// Attach answers with AttachFunc, or returns at once; the container must run.
func (f *Fake) Attach(_ context.Context, id string, req AttachRequest) error {
	f.mu.Lock()
	c, err := f.get(id)
	fn := f.AttachFunc
	if err == nil {
		f.record("attach", id)
	}
	f.mu.Unlock()
	if err != nil {
		return err
	}
	if c.status.State != StateRunning {
		return fmt.Errorf("attach to %s: %w", id, ErrNotAttachable)
	}
	if fn != nil {
		return fn(id, req)
	}
	return nil
}
