package runtime

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestPodContainersShareOneShim runs, with one pod per shim, two
// containers of one pod and one of another: the pod's two share a
// containerd-shim-runc-v2 process, the other pod has its own.
func TestPodContainersShareOneShim(t *testing.T) {
	d := sharedDaemon(t)
	r := newRuntime(t, d, func(o *Options) { o.PodsPerShim = 1 })
	a, b := newPod(t, false), newPod(t, false)
	specs := []ContainerSpec{a.spec("one", "sleep", "300"), a.spec("two", "sleep", "300"), b.spec("one", "sleep", "300")}
	shims := runShims(t, r, specs)
	t.Logf("shim of pod a (two containers): %s; of pod b: %s", rollup(shims[0]), rollup(shims[2]))
	if shims[0] != shims[1] {
		t.Errorf("containers of one pod under two shims: %d and %d", shims[0], shims[1])
	}
	if shims[2] == shims[0] {
		t.Errorf("containers of two pods share shim %d", shims[0])
	}
	// Removing the container that started the shim leaves its sibling
	// running under it.
	if err := r.RemoveContainer(t.Context(), specs[0].ID); err != nil {
		t.Fatal(err)
	}
	time.Sleep(500 * time.Millisecond)
	if st, err := r.ContainerStatus(t.Context(), specs[1].ID); err != nil || st.State != StateRunning {
		t.Fatalf("sibling after removing the first container: %+v, %v", st, err)
	}
	if !strings.Contains(cmdline(shims[1]), "containerd-shim-runc-v2") {
		t.Fatalf("the pod's shim %d is gone with its first container", shims[1])
	}
}

// TestPodsShareShims: with two pods per shim, pods a and b (two
// containers) share one shim and c gets its own; a runtime started later
// (an agent restart) learns the groups from the containers' labels and
// puts a new pod d beside c, and once all of a's and b's containers are
// gone their shim exits.
func TestPodsShareShims(t *testing.T) {
	d := sharedDaemon(t)
	two := func(o *Options) { o.PodsPerShim = 2 }
	r := newRuntime(t, d, two)
	a, b, c := newPod(t, false), newPod(t, false), newPod(t, false)
	specs := []ContainerSpec{a.spec("one", "sleep", "300"), b.spec("one", "sleep", "300"), b.spec("two", "sleep", "300"),
		c.spec("one", "sleep", "300")}
	shims := runShims(t, r, specs)
	t.Logf("shim of pods a and b (three containers): %s; of pod c: %s", rollup(shims[0]), rollup(shims[3]))
	if shims[0] != shims[1] || shims[1] != shims[2] {
		t.Errorf("pods a and b under shims %v, want one", shims[:3])
	}
	if shims[3] == shims[0] {
		t.Errorf("pod c under the full shim %d of a and b", shims[0])
	}
	restarted := newRuntime(t, d, two)
	pd := newPod(t, false)
	if got := runShims(t, restarted, []ContainerSpec{pd.spec("one", "sleep", "300")}); got[0] != shims[3] {
		t.Errorf("after a restart pod d went to shim %d, want c's %d (a and b's is full)", got[0], shims[3])
	}
	for _, s := range specs[:3] {
		if err := restarted.RemoveContainer(t.Context(), s.ID); err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.Now().Add(10 * time.Second)
	for strings.Contains(cmdline(shims[0]), "containerd-shim-runc-v2") {
		if time.Now().After(deadline) {
			t.Fatalf("shim %d of pods a and b still runs with none of their containers left", shims[0])
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// runShims runs specs and returns the pid of each one's shim.
func runShims(t *testing.T, r *Containerd, specs []ContainerSpec) []int {
	t.Helper()
	shims := make([]int, len(specs))
	for i, s := range specs {
		run(t, r, s)
		waitState(t, r, s.ID, StateRunning, 20*time.Second)
		shims[i] = parentPid(t, containerPid(t, r, s.ID))
		if !strings.Contains(cmdline(shims[i]), "containerd-shim-runc-v2") {
			t.Fatalf("%s: parent %d of the container is %q, not a shim", s.ID, shims[i], cmdline(shims[i]))
		}
	}
	return shims
}

func containerPid(t *testing.T, r *Containerd, id string) int {
	t.Helper()
	c, err := r.load(r.nsCtx(t.Context()), id)
	if err != nil {
		t.Fatal(err)
	}
	task, err := c.Task(r.nsCtx(t.Context()), nil)
	if err != nil {
		t.Fatal(err)
	}
	return int(task.Pid())
}

func parentPid(t *testing.T, pid int) int {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		t.Fatal(err)
	}
	// pid (comm) state ppid ...: comm may hold spaces, so cut at the last ')'.
	fields := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	ppid, err := strconv.Atoi(fields[1])
	if err != nil {
		t.Fatal(fmt.Errorf("parse /proc/%d/stat: %w", pid, err))
	}
	return ppid
}

func cmdline(pid int) string {
	b, _ := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "cmdline"))
	return strings.ReplaceAll(string(b), "\x00", " ")
}

// rollup is a process's Rss and Pss from smaps_rollup, for the log.
func rollup(pid int) string {
	b, _ := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "smaps_rollup"))
	var out []string
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "Rss:") || strings.HasPrefix(l, "Pss:") || strings.HasPrefix(l, "Anonymous:") {
			out = append(out, strings.Join(strings.Fields(l), " "))
		}
	}
	return strings.Join(out, ", ")
}
