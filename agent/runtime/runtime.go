package runtime

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"time"
)

// Interface is what the pod worker uses to run containers. Containerd is the
// real one, Fake its in-memory twin.
type Interface interface {
	CreateContainer(ctx context.Context, spec ContainerSpec) error
	StartContainer(ctx context.Context, id string) error
	// StopContainer sends SIGTERM, waits up to grace, then SIGKILLs.
	StopContainer(ctx context.Context, id string, grace time.Duration) error
	// RemoveContainer deletes the task, container, snapshot and fifos; a
	// missing container is success.
	RemoveContainer(ctx context.Context, id string) error
	ContainerStatus(ctx context.Context, id string) (ContainerStatus, error)
	// ListContainers lists the containers of one pod, or all when podUID is "".
	ListContainers(ctx context.Context, podUID string) ([]ContainerStatus, error)
	// TaskStates is the state of every container that has a task, from one
	// cheap call: the relist compares it with the last one and lists the
	// containers (records, labels) only when something changed.
	TaskStates(ctx context.Context) (map[string]State, error)
	Exec(ctx context.Context, id string, req ExecRequest) (exitCode int, err error)
	// Attach connects to the running container's stdio (see AttachRequest)
	// and returns when its output ends, the client detaches or ctx ends.
	Attach(ctx context.Context, id string, req AttachRequest) error
	// UpdateContainerResources applies new cgroup limits to a running
	// container without restarting it (CRI's UpdateContainerResources, for
	// in-place pod resize). Zero fields are left as they are.
	UpdateContainerResources(ctx context.Context, id string, r Resources) error
}

// ErrNotFound is returned for an unknown container ID.
var ErrNotFound = errors.New("container not found")

// Labels on every container orch creates; they let the agent rebuild its
// view of the node from containerd after a restart.
const (
	LabelPodUID       = "io.orch.pod.uid"
	LabelPodName      = "io.orch.pod.name"
	LabelPodNamespace = "io.orch.pod.namespace"
	LabelContainer    = "io.orch.container.name"
	LabelRestartCount = "io.orch.container.restart-count"
	LabelLogPath      = "io.orch.container.log-path"
	LabelStartedAt    = "io.orch.container.started-at"
	LabelOOMKilled    = "io.orch.container.oom-killed"
	// LabelStdin is "true" for a container with an attachable stdin,
	// "once" when stdinOnce closes it after the first attach.
	LabelStdin = "io.orch.container.stdin"
	// LabelShimGroup is the container's shim group (ShimGroupAnnotation),
	// so a restarted agent keeps filling the groups it made.
	LabelShimGroup = "io.orch.container.shim-group"
)

// ContainerID is a stable container ID for attempt restartCount of a pod's
// container: 64 hex digits, like Docker's.
func ContainerID(podUID, name string, restartCount int) string {
	sum := sha256.Sum256([]byte(fmt.Sprintf("%s/%s/%d", podUID, name, restartCount)))
	return hex.EncodeToString(sum[:])
}

// Mount is a bind mount from the host into the container.
type Mount struct {
	HostPath      string
	ContainerPath string
	ReadOnly      bool
}

// Resources are the container's cgroup limits (0 = unset).
type Resources struct {
	CPUShares   uint64
	CPUQuota    int64 // µs per period; 0 = no limit
	CPUPeriod   uint64
	MemoryLimit int64 // bytes
	// Unified are cgroup v2 files (linux.resources.unified), e.g.
	// memory.oom.group; nil on v1.
	Unified map[string]string
}

// Security is the container's resolved securityContext.
type Security struct {
	RunAsUser  *int64
	RunAsGroup *int64
	// SupplementalGroups are added to the process's groups (the pod's
	// supplementalGroups and fsGroup); unless SupplementalGroupsStrict,
	// so are the groups the image's /etc/group gives the user (Merge,
	// Kubernetes' default supplementalGroupsPolicy).
	SupplementalGroups       []int64
	SupplementalGroupsStrict bool
	// Sysctls are the pod's namespaced sysctls, set in the container's
	// network and IPC namespaces (linux.sysctl).
	Sysctls                  map[string]string
	Privileged               bool
	CapAdd, CapDrop          []string // "NET_ADMIN" or "CAP_NET_ADMIN"; "ALL" allowed in drop
	ReadOnlyRootFilesystem   bool
	AllowPrivilegeEscalation *bool // nil = allowed (Kubernetes default)
}

// ContainerSpec is everything needed to create one container of a pod.
type ContainerSpec struct {
	ID           string // see ContainerID
	PodUID       string
	PodName      string
	PodNamespace string
	Name         string
	RestartCount int

	Image      string   // reference of an image already in the store (see agent/images)
	Command    []string // replaces the image's entrypoint
	Args       []string // replaces the image's cmd
	Env        []string // KEY=value, applied over the image's env
	WorkingDir string
	TTY        bool
	Stdin      bool // keep an attachable stdin open
	StdinOnce  bool // close stdin when the first attached client's input ends

	Mounts         []Mount
	HostsPath      string // bind-mounted at /etc/hosts when set
	ResolvConfPath string // bind-mounted at /etc/resolv.conf when set
	HostnamePath   string // bind-mounted at /etc/hostname when set

	// NetnsPath is the pod's network namespace; "" = host network, which
	// also shares the host's UTS namespace (hostname) as kubelet does.
	NetnsPath string
	// PIDNamespacePath, when set, is the PID namespace to join (e.g.
	// /proc/<pid>/ns/pid of the container an ephemeral container targets).
	PIDNamespacePath string
	Hostname         string // UTS hostname with a NetnsPath; defaults to PodName
	CgroupsPath      string // e.g. /orch/kubepods/burstable/pod<uid>/<id>
	Resources        Resources
	OOMScoreAdj      *int
	Security         Security

	// LogPath is the CRI-format log file; empty = default under the
	// runtime's log dir: <ns>_<pod>_<uid>/<container>/<restartCount>.log.
	LogPath string
}

// State of a container.
type State string

const (
	StateCreated State = "created"
	StateRunning State = "running"
	StateExited  State = "exited"
	StateUnknown State = "unknown"
)

// ContainerStatus is what the pod worker reports.
type ContainerStatus struct {
	ID           string
	PodUID       string
	PodName      string
	PodNamespace string
	Name         string
	RestartCount int
	Image        string
	State        State
	Pid          uint32
	ExitCode     int
	CreatedAt    time.Time
	StartedAt    time.Time
	FinishedAt   time.Time
	OOMKilled    bool
	LogPath      string
}

// TerminalSize is a terminal's size in characters.
type TerminalSize struct {
	Width, Height uint16
}

// ExecRequest runs a command in a running container.
type ExecRequest struct {
	Cmd    []string
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
	TTY    bool
	// Resize delivers terminal sizes (TTY only); the first one sent before
	// the process starts becomes its initial size.
	Resize <-chan TerminalSize
}

// AttachRequest connects a client to a running container's stdio: Stdin
// (used only when the container has stdin) feeds the container, its output
// is copied to Stdout/Stderr as well as to the log file, and Resize sizes
// its terminal. With stdinOnce, the end of Stdin closes the container's
// stdin (unless it has a TTY: then, as for any other attach, the end of
// Stdin detaches the client).
type AttachRequest struct {
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
	TTY    bool
	Resize <-chan TerminalSize
}

// ErrNotAttachable is returned by Attach for a container that is not
// running (or whose stdio this agent does not hold).
var ErrNotAttachable = errors.New("container is not running")
