package runtime

import (
	"bufio"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	containerd "github.com/containerd/containerd/v2/client"
)

// cgroupOOMKilled reports whether the memory cgroup of a stopped container
// recorded an OOM kill. It covers the window before the /tasks/oom event is
// processed; the cgroup lives until the task is deleted. cgroup v1 keeps the
// counter in memory.oom_control, v2 in memory.events.
func cgroupOOMKilled(ctx context.Context, c containerd.Container) bool {
	spec, err := c.Spec(ctx)
	if err != nil || spec.Linux == nil || spec.Linux.CgroupsPath == "" {
		return false
	}
	p := spec.Linux.CgroupsPath
	if strings.Contains(p, ":") { // systemd driver slice:prefix:name; not used by orch
		return false
	}
	for _, f := range []string{
		filepath.Join("/sys/fs/cgroup/memory", p, "memory.oom_control"),
		filepath.Join("/sys/fs/cgroup", p, "memory.events"),
	} {
		if n, ok := readCounter(f, "oom_kill"); ok {
			return n > 0
		}
	}
	return false
}

func readCounter(path, key string) (int64, bool) {
	f, err := os.Open(path)
	if err != nil {
		return 0, false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), " ")
		if ok && k == key {
			n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			return n, err == nil
		}
	}
	return 0, false
}
