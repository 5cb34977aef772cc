package runtime

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	runcoptions "github.com/containerd/containerd/api/types/runc/options"
	containerd "github.com/containerd/containerd/v2/client"
	"github.com/containerd/containerd/v2/pkg/cio"
	"github.com/containerd/containerd/v2/pkg/namespaces"
	"github.com/containerd/errdefs"
	"go.uber.org/zap"
)

// Options configure the containerd runtime.
type Options struct {
	Namespace   string // containerd namespace; default "orch"
	Snapshotter string // default: overlayfs when the daemon has it, else native
	LogDir      string // <data-dir>/agent/logs
	// FIFODir holds the containers' stdio FIFOs; it must outlive an agent
	// restart but not a reboot (default DefaultFIFODir).
	FIFODir string
	// RuncRoot is runc's state directory for orch's containers (default:
	// "runc" beside FIFODir, /run/orch/runc). runc's own default,
	// /run/containerd/runc, is shared with every containerd on the host.
	RuncRoot    string
	LogMaxSize  int64 // bytes; default DefaultLogSize
	LogMaxFiles int   // default DefaultLogFiles
	// PodsPerShim is how many pods' containers share one
	// containerd-shim-runc-v2 (default DefaultPodsPerShim; 1: a shim per
	// pod, as CRI runs them).
	PodsPerShim int
}

// DefaultFIFODir holds container stdio FIFOs (tmpfs).
const DefaultFIFODir = "/run/orch/fifo"

// DefaultLogDir is where container logs go: <data-dir>/agent/logs.
func DefaultLogDir(dataDir string) string { return filepath.Join(dataDir, "agent", "logs") }

// Containerd runs pod containers on a containerd daemon.
type Containerd struct {
	log    *zap.Logger
	client *containerd.Client
	opts   Options
	cancel context.CancelFunc

	mu  sync.Mutex
	ios map[string]*ctrIO // container ID → the agent's end of its stdio
	// execs caches each running container's task and process spec for
	// exec (see execTarget).
	execs map[string]execTarget
	// groups assigns pods to shared shims.
	groups *shimGroups
	// changes is TaskChanges (one pending signal at most).
	changes chan struct{}
}

var _ Interface = (*Containerd)(nil)

// New prepares a runtime over client. It picks the snapshotter, starts the
// task event watcher and reattaches logs of running containers (Recover).
func New(ctx context.Context, log *zap.Logger, client *containerd.Client, opts Options) (*Containerd, error) {
	if opts.Namespace == "" {
		opts.Namespace = DefaultNamespace
	}
	if opts.LogDir == "" {
		return nil, errors.New("runtime: LogDir is required")
	}
	if opts.FIFODir == "" {
		opts.FIFODir = DefaultFIFODir
	}
	if opts.RuncRoot == "" {
		opts.RuncRoot = filepath.Join(filepath.Dir(opts.FIFODir), "runc")
	}
	if opts.LogMaxSize == 0 {
		opts.LogMaxSize = DefaultLogSize
	}
	if opts.LogMaxFiles == 0 {
		opts.LogMaxFiles = DefaultLogFiles
	}
	if opts.PodsPerShim == 0 {
		opts.PodsPerShim = DefaultPodsPerShim
	}
	r := &Containerd{log: log.Named("runtime"), client: client, opts: opts, ios: map[string]*ctrIO{},
		execs: map[string]execTarget{}, groups: newShimGroups(opts.PodsPerShim),
		changes: make(chan struct{}, 1)}
	ctx = r.nsCtx(ctx)
	if opts.Snapshotter == "" {
		r.opts.Snapshotter = PickSnapshotter(ctx, client)
	}
	r.log.Info("containerd runtime", zap.String("namespace", opts.Namespace),
		zap.String("snapshotter", r.opts.Snapshotter), zap.Int("podsPerShim", r.opts.PodsPerShim))
	wctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	r.cancel = cancel
	go r.watchTasks(wctx)
	if err := r.Recover(ctx); err != nil {
		cancel()
		return nil, err
	}
	return r, nil
}

// Snapshotter is the snapshotter containers and unpacked images use.
func (r *Containerd) Snapshotter() string { return r.opts.Snapshotter }

// Namespace is the containerd namespace of orch's containers.
func (r *Containerd) Namespace() string { return r.opts.Namespace }

// Client is the underlying containerd client.
func (r *Containerd) Client() *containerd.Client { return r.client }

// Close stops reading container output (containers keep running; a new
// runtime reattaches) and the event watcher. It does not close the client.
func (r *Containerd) Close() {
	r.cancel()
	r.mu.Lock()
	defer r.mu.Unlock()
	for id, x := range r.ios {
		x.stop()
		delete(r.ios, id)
	}
}

func (r *Containerd) nsCtx(ctx context.Context) context.Context {
	return namespaces.WithNamespace(ctx, r.opts.Namespace)
}

// PickSnapshotter returns "overlayfs" when the daemon loaded it, else
// "native".
func PickSnapshotter(ctx context.Context, client *containerd.Client) string {
	resp, err := client.IntrospectionService().Plugins(ctx, `type=="io.containerd.snapshotter.v1",id=="overlayfs"`)
	if err == nil {
		for _, p := range resp.Plugins {
			if p.InitErr == nil {
				return "overlayfs"
			}
		}
	}
	return "native"
}

func (r *Containerd) logPath(s ContainerSpec) string {
	if s.LogPath != "" {
		return s.LogPath
	}
	return filepath.Join(r.opts.LogDir, fmt.Sprintf("%s_%s_%s", s.PodNamespace, s.PodName, s.PodUID),
		s.Name, strconv.Itoa(s.RestartCount)+".log")
}

func (r *Containerd) fifoDir(id string) string { return filepath.Join(r.opts.FIFODir, id) }

// CreateContainer creates the container (snapshot and spec) without a task.
func (r *Containerd) CreateContainer(ctx context.Context, s ContainerSpec) error {
	ctx = r.nsCtx(ctx)
	if s.ID == "" || s.PodUID == "" || s.Name == "" {
		return errors.New("create container: ID, PodUID and Name are required")
	}
	img, err := r.client.GetImage(ctx, s.Image)
	if err != nil {
		return fmt.Errorf("create container %s: image %s: %w", s.Name, s.Image, err)
	}
	if ok, err := img.IsUnpacked(ctx, r.opts.Snapshotter); err != nil || !ok {
		if err := img.Unpack(ctx, r.opts.Snapshotter); err != nil {
			return fmt.Errorf("create container %s: unpack %s: %w", s.Name, s.Image, err)
		}
	}
	group := r.groups.assign(s.PodUID, s.ID)
	if err := r.newContainer(ctx, img, s, group); err != nil {
		if !errdefs.IsAlreadyExists(err) { // an existing one keeps its place
			r.groups.release(s.ID)
		}
		return err
	}
	return nil
}

// newContainer creates the container record with its spec, under shim
// group group.
func (r *Containerd) newContainer(ctx context.Context, img containerd.Image, s ContainerSpec, group string) error {
	specOpts, err := r.specOpts(ctx, img, s, group)
	if err != nil {
		return err
	}
	labels := map[string]string{
		LabelPodUID: s.PodUID, LabelPodName: s.PodName, LabelPodNamespace: s.PodNamespace,
		LabelContainer: s.Name, LabelRestartCount: strconv.Itoa(s.RestartCount), LabelLogPath: r.logPath(s),
		LabelShimGroup: group,
	}
	switch {
	case s.Stdin && s.StdinOnce:
		labels[LabelStdin] = "once"
	case s.Stdin:
		labels[LabelStdin] = "true"
	}
	_, err = r.client.NewContainer(ctx, s.ID,
		containerd.WithImage(img),
		containerd.WithSnapshotter(r.opts.Snapshotter),
		containerd.WithNewSnapshot(s.ID, img),
		containerd.WithRuntime("io.containerd.runc.v2", &runcoptions.Options{Root: r.opts.RuncRoot}),
		containerd.WithContainerLabels(labels),
		containerd.WithNewSpec(specOpts...),
	)
	if err != nil {
		return fmt.Errorf("create container %s (%s): %w", s.Name, s.ID, err)
	}
	return nil
}

func (r *Containerd) load(ctx context.Context, id string) (containerd.Container, error) {
	c, err := r.client.LoadContainer(ctx, id)
	if errdefs.IsNotFound(err) {
		return nil, fmt.Errorf("container %s: %w", id, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("load container %s: %w", id, err)
	}
	return c, nil
}

// StartContainer creates the container's task with its stdio FIFOs (see
// attach.go) and starts it.
func (r *Containerd) StartContainer(ctx context.Context, id string) error {
	ctx = r.nsCtx(ctx)
	c, err := r.load(ctx, id)
	if err != nil {
		return err
	}
	labels, err := c.Labels(ctx)
	if err != nil {
		return fmt.Errorf("container %s labels: %w", id, err)
	}
	streams, err := r.openLog(id, labels[LabelLogPath])
	if err != nil {
		return err
	}
	spec, err := c.Spec(ctx)
	if err != nil {
		streams.close()
		return fmt.Errorf("container %s spec: %w", id, err)
	}
	terminal := spec.Process != nil && spec.Process.Terminal
	if err := os.MkdirAll(r.fifoDir(id), 0o700); err != nil {
		streams.close()
		return fmt.Errorf("create fifo dir: %w", err)
	}
	x := newCtrIO(streams, labels[LabelStdin], terminal)
	task, err := c.NewTask(ctx, func(string) (cio.IO, error) {
		return x.attach()(r.fifoSet(id, terminal, x.stdinR != nil))
	})
	if err != nil {
		x.finish()
		return fmt.Errorf("create task %s: %w", id, err)
	}
	x.io = task.IO()
	r.track(id, x)
	if _, err := c.SetLabels(ctx, map[string]string{LabelStartedAt: time.Now().UTC().Format(time.RFC3339Nano)}); err != nil {
		r.log.Warn("record start time", zap.String("id", id), zap.Error(err))
	}
	if err := task.Start(ctx); err != nil {
		_, _ = task.Delete(ctx, containerd.WithProcessKill)
		return fmt.Errorf("start task %s: %w", id, err)
	}
	return nil
}

// track remembers a container's IO and finishes it when the copy ends.
func (r *Containerd) track(id string, x *ctrIO) {
	r.mu.Lock()
	if old, ok := r.ios[id]; ok && old != x {
		old.stop()
	}
	r.ios[id] = x
	r.mu.Unlock()
	go func() {
		x.io.Wait()
		x.finish()
	}()
}

// fifoSet is the container's stdio FIFOs at fixed paths in its FIFO dir.
// Unlike cio.NewCreator's, they are not removed when the reader closes, so
// a restarted agent can open them again (Recover); RemoveContainer deletes
// them.
func (r *Containerd) fifoSet(id string, terminal, stdin bool) *cio.FIFOSet {
	cfg := cio.Config{Stdout: filepath.Join(r.fifoDir(id), "stdout"), Terminal: terminal}
	if !terminal {
		cfg.Stderr = filepath.Join(r.fifoDir(id), "stderr")
	}
	if stdin {
		cfg.Stdin = filepath.Join(r.fifoDir(id), "stdin")
	}
	return cio.NewFIFOSet(cfg, nil)
}

type logStreams struct{ stdout, stderr *streamWriter }

func (s *logStreams) close() { s.stdout.Close(); s.stderr.Close() }

func (r *Containerd) openLog(id, path string) (*logStreams, error) {
	if path == "" {
		return nil, fmt.Errorf("container %s has no log path label", id)
	}
	lf, err := openLogFile(path, r.opts.LogMaxSize, r.opts.LogMaxFiles)
	if err != nil {
		return nil, err
	}
	return &logStreams{stdout: lf.stream("stdout"), stderr: lf.stream("stderr")}, nil
}
