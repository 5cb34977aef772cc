package install

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/vishvananda/netns"
)

// machine is one Debian box: a systemd-nspawn container booted with
// systemd (-b), in its own cgroups (so each box's orch has its own cgroup
// tree) and, unless offline, joined to the test bridge.
type machine struct {
	name   string
	dir    string // its root file system
	ip     string
	openrc bool // booted with openrc-init instead of systemd
	leader int  // the container's PID 1, as the host sees it
	cmd    *exec.Cmd
}

const (
	testBridge  = "orchti0"
	pathEnv     = "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
	bootTimeout = 90 * time.Second
)

// v1Controllers are the cgroup v1 hierarchies a box gets its own directory
// in; nspawn mounts them read-only inside (a real box has them writable),
// boot remounts them writable.
var v1Controllers = []string{"cpu", "cpuacct", "cpuset", "memory", "devices", "freezer", "blkio", "pids"}

// boot copies the base root file system, names the box and starts it
// with systemd. An ip of "" leaves the box offline: only its loopback and
// a veth pair of its own.
func boot(t *testing.T, base, name, ip string) *machine {
	return bootWith(t, base, name, ip, false)
}

// bootOpenRC starts a box whose PID 1 is openrc-init (OpenRC's own init,
// as on Alpine), offline.
func bootOpenRC(t *testing.T, base, name string) *machine {
	return bootWith(t, base, name, "", true)
}

func bootWith(t *testing.T, base, name, ip string, openrc bool) *machine {
	t.Helper()
	m := &machine{name: name, dir: filepath.Join(t.TempDir(), "root"), ip: ip, openrc: openrc}
	run(t, "cp", "-a", base, m.dir)
	must(t, os.WriteFile(filepath.Join(m.dir, "etc/hostname"), []byte(name+"\n"), 0o644))
	cgs := m.makeCgroups(t)
	args := []string{"-c", `for d in $CGS; do echo $$ >"$d/cgroup.procs" || exit 1; done; exec systemd-nspawn "$@"`, "sh",
		"-D", m.dir, "-M", name, "--register=no", "--keep-unit", "--console=passive",
		// runc joins a session keyring: nspawn's filter refuses keyctl.
		"--system-call-filter=add_key keyctl request_key"}
	if !openrc {
		args = append(args, "-b")
	}
	if ip != "" {
		args = append(args, "--network-bridge="+testBridge)
	} else {
		args = append(args, "--private-network")
	}
	if openrc {
		args = append(args, "/sbin/openrc-init")
	}
	m.cmd = exec.Command("sh", args...)
	m.cmd.Env = append(os.Environ(), "CGS="+strings.Join(cgs, " "))
	log, err := os.Create(filepath.Join(t.TempDir(), "console.log"))
	must(t, err)
	m.cmd.Stdout, m.cmd.Stderr = log, log
	must(t, m.cmd.Start())
	t.Cleanup(func() { m.stop(t, cgs) })
	m.awaitBoot(t, log.Name())
	m.setUp(t)
	return m
}

// cgroupDir is the directory of this process's cgroup in a v1 hierarchy.
func cgroupDir(controller string) (string, error) {
	b, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return "", err
	}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.SplitN(line, ":", 3)
		if len(f) == 3 && (f[1] == controller || strings.Contains(","+f[1]+",", ","+controller+",")) {
			return filepath.Join("/sys/fs/cgroup", controller, f[2]), nil
		}
	}
	return "", fmt.Errorf("no %s cgroup in /proc/self/cgroup", controller)
}

func (m *machine) makeCgroups(t *testing.T) []string {
	t.Helper()
	var dirs []string
	for _, c := range v1Controllers {
		parent, err := cgroupDir(c)
		must(t, err)
		d := filepath.Join(parent, m.name)
		must(t, os.MkdirAll(d, 0o755))
		if c == "cpuset" {
			for _, f := range []string{"cpuset.cpus", "cpuset.mems"} {
				b, err := os.ReadFile(filepath.Join(parent, f))
				must(t, err)
				must(t, os.WriteFile(filepath.Join(d, f), b, 0o644))
			}
		}
		dirs = append(dirs, d)
	}
	return dirs
}

func (m *machine) awaitBoot(t *testing.T, logPath string) {
	t.Helper()
	deadline := time.Now().Add(bootTimeout)
	for time.Now().Before(deadline) {
		// nspawn's first child only sets up and execs the box's PID 1
		// in a child of its own: look again until the box answers.
		m.leader = childOf(m.cmd.Process.Pid)
		if m.leader != 0 && m.booted() {
			return
		}
		time.Sleep(500 * time.Millisecond)
	}
	console, _ := os.ReadFile(logPath)
	t.Fatalf("%s did not boot in %v:\n%s", m.name, bootTimeout, console)
}

func (m *machine) booted() bool {
	if m.openrc {
		// PID 1 must be openrc-init itself (not nspawn's set-up child) and
		// have reached the default runlevel.
		out, _ := m.shErr(`[ "$(cat /proc/1/comm)" = openrc-init ] && cat /run/openrc/softlevel`)
		return strings.TrimSpace(out) == "default"
	}
	out, _ := m.shErr(`[ "$(cat /proc/1/comm)" = systemd ] && systemctl is-system-running`)
	s := strings.TrimSpace(out)
	return s == "running" || s == "degraded"
}

// childOf returns the first child of pid, 0 if none yet.
func childOf(pid int) int {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/children", pid, pid))
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return 0
	}
	n, _ := strconv.Atoi(f[0])
	return n
}

// setUp makes the cgroup hierarchies writable and gives the box its
// address and default route (an offline box gets a veth pair with both
// ends inside: orch takes its node IP from the default route).
func (m *machine) setUp(t *testing.T) {
	t.Helper()
	if m.openrc {
		// nspawn gives a box with a private network a tmpfs /sys holding
		// sysfs parts and the cgroup mounts; Debian's mountkernfs.sh,
		// run by OpenRC at sysinit, mounts a whole sysfs over it.
		run(t, "nsenter", "-t", strconv.Itoa(m.leader), "-a", "--", "umount", "-l", "/sys")
	}
	for _, c := range v1Controllers {
		out, err := exec.Command("nsenter", "-t", strconv.Itoa(m.leader), "-m", "--", "mount", "-o", "remount,bind,rw", "/sys/fs/cgroup/"+c).CombinedOutput()
		if err != nil {
			mi, _ := os.ReadFile(fmt.Sprintf("/proc/%d/mountinfo", m.leader))
			t.Fatalf("%s: remounting /sys/fs/cgroup/%s: %v\n%s\nmounts:\n%s", m.name, c, err, out, mi)
		}
	}
	link, ip, gw := "host0", m.ip, "10.77.0.1"
	if m.ip == "" {
		link, ip, gw = "eth0", "10.78.0.2", "10.78.0.1"
		m.sh(t, "ip link add eth0 type veth peer name eth0p && ip link set eth0p up")
	}
	m.sh(t, fmt.Sprintf("ip addr add %s/24 dev %s && ip link set %s up && ip route add default via %s dev %s onlink", ip, link, link, gw, link))
}

// stop powers the box off (SIGTERM to nspawn), then kills what is left
// and removes its cgroups, its root and its bridge port.
func (m *machine) stop(t *testing.T, cgs []string) {
	if m.openrc && m.leader != 0 {
		// nspawn's power-off signal is systemd's; openrc-init's whole
		// PID namespace goes with it instead.
		_ = syscall.Kill(m.leader, syscall.SIGKILL)
	}
	_ = m.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { _ = m.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		_ = m.cmd.Process.Kill()
		<-done
	}
	for _, d := range cgs {
		if err := removeCgroup(d); err != nil {
			t.Errorf("cleanup: %v", err)
		}
	}
	_ = exec.Command("ip", "link", "delete", "vb-"+m.name).Run()
}

// removeCgroup kills every process left in a cgroup tree and removes it,
// deepest first.
func removeCgroup(root string) error {
	var err error
	for i := 0; i < 50; i++ {
		var dirs []string
		_ = filepath.Walk(root, func(p string, info os.FileInfo, err error) error {
			if err == nil && info.IsDir() {
				dirs = append(dirs, p)
			}
			return nil
		})
		if len(dirs) == 0 {
			return nil
		}
		for j := len(dirs) - 1; j >= 0; j-- {
			killAll(filepath.Join(dirs[j], "cgroup.procs"))
			err = syscall.Rmdir(dirs[j])
		}
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("cgroup %s: %w", root, err)
}

func killAll(procs string) {
	f, err := os.Open(procs)
	if err != nil {
		return
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if pid, err := strconv.Atoi(s.Text()); err == nil {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}

// shErr runs a shell script inside the box as root with a clean
// environment and returns its combined output.
func (m *machine) shErr(script string, env ...string) (string, error) {
	args := append([]string{"-t", strconv.Itoa(m.leader), "-a", "--", "env", "-i", pathEnv, "HOME=/root"}, env...)
	args = append(args, "sh", "-c", script)
	out, err := exec.Command("nsenter", args...).CombinedOutput()
	return string(out), err
}

// sh is shErr that fails the test on error.
func (m *machine) sh(t *testing.T, script string, env ...string) string {
	t.Helper()
	out, err := m.shErr(script, env...)
	if err != nil {
		t.Fatalf("%s: %s: %v\n%s", m.name, script, err, out)
	}
	return out
}

// serve serves dir over HTTP on 127.0.0.1:port inside the box's network
// namespace: a release host on the box's own loopback.
func (m *machine) serve(t *testing.T, dir string, port int) {
	t.Helper()
	l, err := listenIn(m.leader, fmt.Sprintf("127.0.0.1:%d", port))
	must(t, err)
	srv := &http.Server{Handler: http.FileServer(http.Dir(dir)), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(func() { _ = srv.Close() })
}

// listenIn opens a TCP listener in the network namespace of pid; the
// socket stays in that namespace whatever thread serves it. The switch
// happens on a thread of its own, which dies if it cannot switch back.
func listenIn(pid int, addr string) (net.Listener, error) {
	type result struct {
		l   net.Listener
		err error
	}
	ch := make(chan result, 1)
	go func() {
		runtime.LockOSThread()
		l, back, err := listenOnThread(pid, addr)
		if back {
			runtime.UnlockOSThread()
		}
		ch <- result{l, err}
	}()
	r := <-ch
	return r.l, r.err
}

// listenOnThread does listenIn's work on a locked thread; back tells
// whether the thread is in its own namespace again.
func listenOnThread(pid int, addr string) (net.Listener, bool, error) {
	orig, err := netns.Get()
	if err != nil {
		return nil, true, err
	}
	defer orig.Close()
	target, err := netns.GetFromPid(pid)
	if err != nil {
		return nil, true, err
	}
	defer target.Close()
	if err := netns.Set(target); err != nil {
		return nil, true, err
	}
	l, lerr := net.Listen("tcp", addr)
	if err := netns.Set(orig); err != nil {
		return nil, false, errors.Join(lerr, fmt.Errorf("returning to the test's netns: %w", err))
	}
	return l, true, lerr
}

func run(t *testing.T, name string, args ...string) string {
	t.Helper()
	out, err := exec.Command(name, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out)
}
