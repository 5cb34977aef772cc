package checkconfig

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/orch/orch/test/testutil"
)

func TestMain(m *testing.M) { testutil.Main(m) }

func release(t *testing.T) string {
	var u unix.Utsname
	if err := unix.Uname(&u); err != nil {
		t.Fatal(err)
	}
	return string(bytes.TrimRight(u.Release[:], "\x00"))
}

// tree writes files (path -> content; bin/ files executable) under a new root.
func tree(t *testing.T, files map[string]string) string {
	root := t.TempDir()
	for p, c := range files {
		full := filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(c), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func checkConfig(t *testing.T, args ...string) (string, int) {
	t.Helper()
	cmd := exec.Command(testutil.Binary(t), append([]string{"check-config"}, args...)...)
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return string(out), 0
	case errors.As(err, &ee):
		return string(out), ee.ExitCode()
	}
	t.Fatalf("orch check-config: %v", err)
	return "", 0
}

func piTree(t *testing.T, controllers string) string {
	rel := release(t)
	return tree(t, map[string]string{
		"/proc/self/mountinfo":                 "25 1 0:23 / /sys/fs/cgroup rw,nosuid - cgroup2 cgroup2 rw\n",
		"/sys/fs/cgroup/cgroup.controllers":    controllers,
		"/proc/filesystems":                    "nodev\toverlay\n",
		"/proc/modules":                        "br_netfilter 32768 0 - Live 0x0\n",
		"/lib/modules/" + rel + "/modules.dep": "kernel/drivers/net/vxlan/vxlan.ko.xz:\n",
		"/usr/sbin/iptables":                   "",
		"/proc/sys/net/ipv4/ip_forward":        "0\n",
		"/proc/device-tree/model":              "Raspberry Pi 5 Model B Rev 1.0\x00",
		"/boot/firmware/cmdline.txt":           "console=tty1 rootwait\n",
	})
}

func TestRaspberryPiMemoryOff(t *testing.T) {
	out, code := checkConfig(t, "--root", piTree(t, "cpuset cpu io pids\n"))
	if code != 1 {
		t.Fatalf("exit %d, want 1:\n%s", code, out)
	}
	for _, want := range []string{
		"cgroup memory controller:    MISSING",
		"cgroup_memory=1 cgroup_enable=memory",
		"/boot/firmware/cmdline.txt",
		"vxlan module:                OK (loadable)",
		"1 required check(s) failed",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

func TestRaspberryPiReady(t *testing.T) {
	out, code := checkConfig(t, "--root", piTree(t, "cpuset cpu io memory pids\n"))
	if code != 0 || strings.Contains(out, "MISSING") {
		t.Fatalf("exit %d:\n%s", code, out)
	}
}

func TestEmptyHost(t *testing.T) {
	out, code := checkConfig(t, "--root", tree(t, nil))
	if code != 1 || !strings.Contains(out, "fix: install iptables") {
		t.Fatalf("exit %d:\n%s", code, out)
	}
}

// TestThisHost runs the checks on the machine the tests run on: every
// line has a status, and the exit status agrees with the output.
func TestThisHost(t *testing.T) {
	out, code := checkConfig(t)
	if !strings.Contains(out, "cgroup v2:") || !strings.Contains(out, "ip_forward:") {
		t.Fatalf("output:\n%s", out)
	}
	failed := strings.Contains(out, "required check(s) failed")
	if (code != 0) != failed {
		t.Fatalf("exit %d but output:\n%s", code, out)
	}
	t.Logf("this host:\n%s", out)
}
