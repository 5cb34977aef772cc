package runtime

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// cgroupParent returns a fresh cgroup parent path and removes its
// directories in every v1 hierarchy (or v2) on cleanup.
func cgroupParent(t *testing.T) string {
	parent := "/orcht-" + randHex(4)
	t.Cleanup(func() { removeCgroupDirs(parent[1:]) })
	return parent
}

func ptr[T any](v T) *T { return &v }

func TestSecurityMountsAndResources(t *testing.T) {
	d := sharedDaemon(t)
	r := newRuntime(t, d)
	p := newPod(t, true)
	data := t.TempDir()
	if err := os.WriteFile(filepath.Join(data, "f"), []byte("data-file\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	hosts := filepath.Join(t.TempDir(), "hosts")
	if err := os.WriteFile(hosts, []byte("10.9.8.7 orch-test-host\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s := p.spec("locked", "sh", "-c", `id; cat /data/f
touch /data/x 2>/dev/null && echo data-writable || echo data-ro
touch /x 2>/dev/null && echo root-writable || echo root-ro
grep -E '^(NoNewPrivs|CapEff)' /proc/self/status; cat /etc/hosts; echo oom=$(cat /proc/self/oom_score_adj)
sleep 1000`)
	s.Mounts = []Mount{{HostPath: data, ContainerPath: "/data", ReadOnly: true}}
	s.HostsPath = hosts
	s.CgroupsPath = cgroupParent(t) + "/" + s.ID
	s.Resources = Resources{CPUShares: 512, CPUQuota: 50000, CPUPeriod: 100000, MemoryLimit: 64 << 20}
	s.OOMScoreAdj = ptr(-998) // clamped to ours: this VM lacks CAP_SYS_RESOURCE
	s.Security = Security{RunAsUser: ptr(int64(65534)), RunAsGroup: ptr(int64(65534)), CapDrop: []string{"ALL"},
		ReadOnlyRootFilesystem: true, AllowPrivilegeEscalation: ptr(false)}
	run(t, r, s)
	st := waitState(t, r, s.ID, StateRunning, 20*time.Second)
	log := waitLog(t, st.LogPath, "oom=", 10*time.Second)
	own, _ := ownOOMScoreAdj()
	for _, want := range []string{"uid=65534(nobody) gid=65534(nogroup)", "data-file", "data-ro", "root-ro",
		"NoNewPrivs:\t1", "CapEff:\t0000000000000000", "10.9.8.7 orch-test-host", "oom=" + itoa(own)} {
		if !strings.Contains(log, want) {
			t.Errorf("log lacks %q:\n%s", want, log)
		}
	}
	if isCgroupV1() {
		checkFile(t, "/sys/fs/cgroup/memory"+s.CgroupsPath+"/memory.limit_in_bytes", "67108864")
		checkFile(t, "/sys/fs/cgroup/cpu"+s.CgroupsPath+"/cpu.shares", "512")
		checkFile(t, "/sys/fs/cgroup/cpu"+s.CgroupsPath+"/cpu.cfs_quota_us", "50000")
	}
	if err := r.StopContainer(context.Background(), s.ID, 0); err != nil {
		t.Fatal(err)
	}
}

// TestSupplementalGroups: the image's /etc/group memberships of the user
// (users:x:100:nobody) merge with the pod's supplemental groups, as
// containerd's CRI does; the Strict policy leaves the image's out.
func TestSupplementalGroups(t *testing.T) {
	d := sharedDaemon(t)
	r := newRuntime(t, d)
	p := newPod(t, false)
	for name, c := range map[string]struct {
		sec  Security
		want string
	}{
		"merge":  {Security{RunAsUser: ptr(int64(65534)), SupplementalGroups: []int64{60000, 100}}, "groups=65534 100 60000"},
		"strict": {Security{RunAsUser: ptr(int64(65534)), SupplementalGroups: []int64{60000}, SupplementalGroupsStrict: true}, "groups=65534 60000"},
		"root":   {Security{SupplementalGroups: []int64{1234}}, "groups=0 1234"},
	} {
		s := p.spec(name, "sh", "-c", "echo groups=$(id -G); sleep 1000")
		s.Security = c.sec
		run(t, r, s)
		st := waitState(t, r, s.ID, StateRunning, 20*time.Second)
		if log := waitLog(t, st.LogPath, "groups=", 10*time.Second); !strings.Contains(log, c.want+"\n") {
			t.Errorf("%s: got %q, want %q", name, log, c.want)
		}
		if err := r.StopContainer(context.Background(), s.ID, 0); err != nil {
			t.Fatal(err)
		}
	}
}

func TestOOMKilled(t *testing.T) {
	d := sharedDaemon(t)
	r := newRuntime(t, d)
	p := newPod(t, false)
	s := p.spec("hog", "tail", "/dev/zero") // buffers an endless line
	s.CgroupsPath = cgroupParent(t) + "/" + s.ID
	s.Resources.MemoryLimit = 16 << 20
	run(t, r, s)
	st := waitState(t, r, s.ID, StateExited, 60*time.Second)
	if st.ExitCode != 137 || !st.OOMKilled {
		t.Fatalf("status = %+v", st)
	}
}

func isCgroupV1() bool {
	_, err := os.Stat("/sys/fs/cgroup/memory")
	return err == nil
}

func checkFile(t *testing.T, path, want string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Errorf("read %s: %v", path, err)
		return
	}
	if got := strings.TrimSpace(string(b)); got != want {
		t.Errorf("%s = %s, want %s", path, got, want)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

// TestSysctls: the pod's namespaced sysctls are set in the container's
// IPC and network namespaces, not on the host.
func TestSysctls(t *testing.T) {
	d := sharedDaemon(t)
	r := newRuntime(t, d)
	p := newPod(t, true)
	s := p.spec("sysctl", "sh", "-c", "echo shm=$(cat /proc/sys/kernel/shm_rmid_forced) ports=$(cat /proc/sys/net/ipv4/ip_local_port_range); sleep 1000")
	s.Security.Sysctls = map[string]string{"kernel.shm_rmid_forced": "1", "net.ipv4.ip_local_port_range": "20000\t30000"}
	run(t, r, s)
	st := waitState(t, r, s.ID, StateRunning, 20*time.Second)
	if log := waitLog(t, st.LogPath, "shm=", 10*time.Second); !strings.Contains(log, "shm=1 ports=20000 30000") {
		t.Errorf("sysctls in the container: %q", log)
	}
	if host, _ := os.ReadFile("/proc/sys/kernel/shm_rmid_forced"); strings.TrimSpace(string(host)) == "1" {
		t.Log("the host has shm_rmid_forced=1 of its own")
	}
	if err := r.StopContainer(context.Background(), s.ID, 0); err != nil {
		t.Fatal(err)
	}
}
