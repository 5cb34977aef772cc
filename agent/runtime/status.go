package runtime

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	apievents "github.com/containerd/containerd/api/events"
	"github.com/containerd/containerd/api/services/tasks/v1"
	tasktypes "github.com/containerd/containerd/api/types/task"
	containerd "github.com/containerd/containerd/v2/client"
	"github.com/containerd/containerd/v2/core/events"
	"github.com/containerd/errdefs"
	"github.com/containerd/typeurl/v2"
	"go.uber.org/zap"
)

// exitCodeUnknown is reported for a started container whose task vanished
// (shim killed, node rebooted), as Kubernetes does for unknown exits.
const exitCodeUnknown = 255

// ContainerStatus reports a container's state from containerd.
func (r *Containerd) ContainerStatus(ctx context.Context, id string) (ContainerStatus, error) {
	ctx = r.nsCtx(ctx)
	c, err := r.load(ctx, id)
	if err != nil {
		return ContainerStatus{}, err
	}
	return r.status(ctx, c)
}

func (r *Containerd) status(ctx context.Context, c containerd.Container) (ContainerStatus, error) {
	task, err := c.Task(ctx, nil)
	if errdefs.IsNotFound(err) {
		return r.statusOf(ctx, c, taskState{})
	}
	if err != nil {
		return ContainerStatus{}, fmt.Errorf("container %s task: %w", c.ID(), err)
	}
	ts, err := task.Status(ctx)
	if err != nil {
		return ContainerStatus{}, fmt.Errorf("container %s task status: %w", c.ID(), err)
	}
	return r.statusOf(ctx, c, taskState{found: true, status: ts.Status, pid: task.Pid(), exitCode: ts.ExitStatus, exitedAt: ts.ExitTime})
}

// taskState is what the status needs of a container's task.
type taskState struct {
	found    bool
	status   containerd.ProcessStatus
	pid      uint32
	exitCode uint32
	exitedAt time.Time
}

// statusOf builds a container's status from its record (labels) and its
// task's state.
func (r *Containerd) statusOf(ctx context.Context, c containerd.Container, ts taskState) (ContainerStatus, error) {
	info, err := c.Info(ctx, containerd.WithoutRefreshedMetadata)
	if err != nil {
		return ContainerStatus{}, fmt.Errorf("container %s info: %w", c.ID(), err)
	}
	l := info.Labels
	rc, _ := strconv.Atoi(l[LabelRestartCount])
	st := ContainerStatus{
		ID: c.ID(), PodUID: l[LabelPodUID], PodName: l[LabelPodName], PodNamespace: l[LabelPodNamespace],
		Name: l[LabelContainer], RestartCount: rc, Image: info.Image, CreatedAt: info.CreatedAt,
		LogPath: l[LabelLogPath], OOMKilled: l[LabelOOMKilled] == "true", State: StateCreated,
	}
	if t, err := time.Parse(time.RFC3339Nano, l[LabelStartedAt]); err == nil {
		st.StartedAt = t
	}
	if !ts.found {
		if !st.StartedAt.IsZero() {
			st.State, st.ExitCode = StateExited, exitCodeUnknown
		}
		return st, nil
	}
	st.Pid, st.State = ts.pid, stateOf(ts.status)
	if st.State == StateExited {
		r.waitOutput(ctx, c.ID())
		st.ExitCode, st.FinishedAt = int(ts.exitCode), ts.exitedAt
		st.Pid = 0
		if !st.OOMKilled && st.ExitCode == 137 {
			st.OOMKilled = cgroupOOMKilled(ctx, c)
		}
	}
	return st, nil
}

// stateOf is the container state of a task status.
func stateOf(s containerd.ProcessStatus) State {
	switch s {
	case containerd.Running, containerd.Paused, containerd.Pausing:
		return StateRunning
	case containerd.Created:
		return StateCreated
	case containerd.Stopped:
		return StateExited
	default:
		return StateUnknown
	}
}

// outputDrainWait bounds how long a stopped container's status waits for
// the rest of its output to reach the log (a child that kept stdout open
// would otherwise hold the status back).
const outputDrainWait = 2 * time.Second

// waitOutput waits until the output copy of a stopped container ended, so
// that once the agent reports the container exited its log is complete: a
// client that reads the log on seeing the pod succeed gets all of it (as
// CRI does: containerd waits for the IO before it reports the exit).
func (r *Containerd) waitOutput(ctx context.Context, id string) {
	r.mu.Lock()
	x := r.ios[id]
	r.mu.Unlock()
	if x == nil {
		return
	}
	t := time.NewTimer(outputDrainWait)
	defer t.Stop()
	select {
	case <-x.done:
	case <-t.C:
	case <-ctx.Done():
	}
}

// ListContainers lists orch's containers, of one pod when podUID is set,
// from containerd's labels: this is how the agent recovers after a restart.
func (r *Containerd) ListContainers(ctx context.Context, podUID string) ([]ContainerStatus, error) {
	ctx = r.nsCtx(ctx)
	filter := fmt.Sprintf("labels.%q", LabelPodUID)
	if podUID != "" {
		filter = fmt.Sprintf("labels.%q==%q", LabelPodUID, podUID)
	}
	cs, err := r.client.Containers(ctx, filter)
	if err != nil {
		return nil, fmt.Errorf("list containers: %w", err)
	}
	// All pods (the relist): every task's state from one call. One pod:
	// its containers' tasks one by one, rather than every task of the node
	// (containerd asks each task's shim for a list).
	var tasks map[string]taskState
	if podUID == "" {
		if tasks, err = r.taskStates(ctx); err != nil {
			return nil, err
		}
	}
	out := make([]ContainerStatus, 0, len(cs))
	for _, c := range cs {
		var st ContainerStatus
		if ts, ok := tasks[c.ID()]; ok {
			st, err = r.statusOf(ctx, c, ts)
		} else {
			// One pod's container, no task, or one containerd could not
			// read the state of (it leaves those out of the list).
			st, err = r.status(ctx, c)
		}
		if errdefs.IsNotFound(err) {
			continue // removed meanwhile
		}
		if err != nil {
			return nil, err
		}
		out = append(out, st)
	}
	return out, nil
}

// taskStates lists the namespace's tasks with one call (the relist runs
// every 2 s: asking for each container's task, twice, was 2 calls per
// container, each a round trip to its shim).
func (r *Containerd) taskStates(ctx context.Context) (map[string]taskState, error) {
	resp, err := r.client.TaskService().List(ctx, &tasks.ListTasksRequest{})
	if err != nil {
		return nil, fmt.Errorf("list tasks: %w", err)
	}
	out := make(map[string]taskState, len(resp.Tasks))
	for _, t := range resp.Tasks {
		ts := taskState{found: true, status: processStatus(t.Status), pid: t.Pid, exitCode: t.ExitStatus}
		if t.ExitedAt != nil {
			ts.exitedAt = t.ExitedAt.AsTime()
		}
		out[t.ID] = ts
	}
	return out, nil
}

// TaskStates implements Interface with one ListTasks call.
func (r *Containerd) TaskStates(ctx context.Context) (map[string]State, error) {
	tasks, err := r.taskStates(r.nsCtx(ctx))
	if err != nil {
		return nil, err
	}
	out := make(map[string]State, len(tasks))
	for id, t := range tasks {
		out[id] = stateOf(t.status)
	}
	return out, nil
}

// processStatus maps the API's task status to the client's, as
// containerd's client does.
func processStatus(s tasktypes.Status) containerd.ProcessStatus {
	return containerd.ProcessStatus(strings.ToLower(s.String()))
}

// TaskChanges signals, coalesced, that a container's task started,
// exited or was deleted (containerd's task events, exec processes left
// out), and once after each (re)subscription, when events may have been
// missed. The kubelet relists on it instead of polling as often.
func (r *Containerd) TaskChanges() <-chan struct{} { return r.changes }

// watchTasks follows the namespace's task events: an OOM kill marks the
// container with LabelOOMKilled (so ContainerStatus reports OOMKilled)
// before its exit is signalled; starts, exits and deletes of containers
// are signalled on TaskChanges.
func (r *Containerd) watchTasks(ctx context.Context) {
	var filters []string
	for _, topic := range []string{"/tasks/oom", "/tasks/start", "/tasks/exit", "/tasks/delete"} {
		filters = append(filters, fmt.Sprintf(`topic==%q,namespace==%q`, topic, r.opts.Namespace))
	}
	for ctx.Err() == nil {
		evs, errs := r.client.Subscribe(ctx, filters...)
		r.signalChange()
		r.consumeTasks(ctx, evs, errs)
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Second):
		}
	}
}

func (r *Containerd) signalChange() {
	select {
	case r.changes <- struct{}{}:
	default: // one is pending: the relist will see this change too
	}
}

func (r *Containerd) consumeTasks(ctx context.Context, evs <-chan *events.Envelope, errs <-chan error) {
	for {
		select {
		case <-ctx.Done():
			return
		case err := <-errs:
			if err != nil && ctx.Err() == nil {
				r.log.Debug("event subscription ended", zap.Error(err))
			}
			return
		case e := <-evs:
			v, err := typeurl.UnmarshalAny(e.Event)
			if err != nil {
				continue
			}
			switch ev := v.(type) {
			case *apievents.TaskOOM:
				r.markOOM(ctx, ev.ContainerID)
			case *apievents.TaskStart:
				r.signalChange()
			case *apievents.TaskExit:
				if ev.ID == ev.ContainerID { // not an exec process
					r.signalChange()
				}
			case *apievents.TaskDelete:
				if ev.ID == "" || ev.ID == ev.ContainerID {
					r.signalChange()
				}
			}
		}
	}
}

func (r *Containerd) markOOM(ctx context.Context, id string) {
	c, err := r.client.LoadContainer(ctx, id)
	if err != nil {
		return
	}
	if _, err := c.SetLabels(ctx, map[string]string{LabelOOMKilled: "true"}); err != nil {
		r.log.Warn("record OOM kill", zap.String("id", id), zap.Error(err))
		return
	}
	r.log.Info("container OOM-killed", zap.String("id", id))
}
