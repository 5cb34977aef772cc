package hostcheck

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const rel = "6.1.0-test"

// fakeHost builds a fake root with files (path -> content) and returns an
// OSHost over it, with bin/ as its only PATH directory.
func fakeHost(t *testing.T, files map[string]string) OSHost {
	t.Helper()
	root := t.TempDir()
	for p, c := range files {
		full := filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		mode := os.FileMode(0o644)
		if strings.HasPrefix(p, "/bin/") {
			mode = 0o755
		}
		if err := os.WriteFile(full, []byte(c), mode); err != nil {
			t.Fatal(err)
		}
	}
	if _, ok := files["/bin/iptables-legacy"]; ok {
		if err := os.Symlink("iptables-legacy", filepath.Join(root, "bin/iptables")); err != nil {
			t.Fatal(err)
		}
	}
	return OSHost{Root: root, Path: []string{filepath.Join(root, "bin")}, Release: rel}
}

const mountinfo = "25 1 0:23 / /sys/fs/cgroup rw,nosuid - cgroup2 cgroup2 rw\n"

func goodHost() map[string]string {
	return map[string]string{
		"/proc/self/mountinfo":                 mountinfo,
		"/sys/fs/cgroup/cgroup.controllers":    "cpuset cpu io memory pids\n",
		"/proc/filesystems":                    "nodev\tsysfs\nnodev\toverlay\n",
		"/proc/modules":                        "vxlan 90112 0 - Live 0x0\n",
		"/lib/modules/" + rel + "/modules.dep": "kernel/net/bridge/br_netfilter.ko.xz: kernel/net/bridge/bridge.ko.xz\n",
		"/bin/iptables-legacy":                 "",
		"/proc/sys/net/ipv4/ip_forward":        "0\n",
	}
}

func TestAllOK(t *testing.T) {
	h := fakeHost(t, goodHost())
	var out bytes.Buffer
	if n := Print(&out, Run(h)); n != 0 {
		t.Fatalf("%d failures:\n%s", n, out.String())
	}
	for _, want := range []string{"loadable", "backend legacy", "vxlan module:", "loaded"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}

func TestPiMemoryCgroupOff(t *testing.T) {
	files := goodHost()
	files["/sys/fs/cgroup/cgroup.controllers"] = "cpuset cpu io pids\n"
	files["/proc/device-tree/model"] = "Raspberry Pi 4 Model B Rev 1.4\x00"
	files["/boot/firmware/cmdline.txt"] = "console=tty1 root=PARTUUID=x rootwait\n"
	h := fakeHost(t, files)
	r := CgroupController(h, "memory")
	if r.OK || !strings.Contains(r.Fix, "cgroup_memory=1 cgroup_enable=memory") || !strings.Contains(r.Fix, "/boot/firmware/cmdline.txt") {
		t.Fatalf("result %+v", r)
	}
	var out bytes.Buffer
	if n := Print(&out, Run(h)); n != 1 || !strings.Contains(out.String(), "cgroup memory controller:    MISSING") {
		t.Fatalf("%d failures:\n%s", n, out.String())
	}
}

func TestOldPiCmdline(t *testing.T) {
	files := goodHost()
	files["/sys/fs/cgroup/cgroup.controllers"] = "cpu\n"
	files["/sys/firmware/devicetree/base/model"] = "Raspberry Pi 3 Model B Plus Rev 1.3\x00"
	files["/boot/cmdline.txt"] = "console=tty1\n"
	r := CgroupController(fakeHost(t, files), "memory")
	if r.OK || !strings.Contains(r.Fix, " /boot/cmdline.txt") {
		t.Fatalf("result %+v", r)
	}
}

func TestNotPiMemoryFix(t *testing.T) {
	files := goodHost()
	files["/sys/fs/cgroup/cgroup.controllers"] = "cpu\n"
	r := CgroupController(fakeHost(t, files), "memory")
	if r.OK || strings.Contains(r.Fix, "cmdline.txt") || !strings.Contains(r.Fix, "grub") {
		t.Fatalf("result %+v", r)
	}
}

func TestMissingEverything(t *testing.T) {
	h := fakeHost(t, map[string]string{"/proc/self/mountinfo": "22 1 0:5 / /proc rw - proc proc rw\n"})
	rs := Run(h)
	var out bytes.Buffer
	// All required checks fail; vxlan is optional.
	if n := Print(&out, rs); n != len(rs)-1 {
		t.Fatalf("%d failures:\n%s", n, out.String())
	}
	for _, want := range []string{"MISSING (optional)", "fix: install iptables", "modprobe br_netfilter", "modprobe overlay"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}

func TestHybridV1(t *testing.T) {
	files := goodHost()
	files["/sys/fs/cgroup/cgroup.controllers"] = ""
	files["/proc/cgroups"] = "#subsys_name\thierarchy\tnum_cgroups\tenabled\ncpu\t1\t15\t1\nmemory\t4\t52\t1\n"
	var out bytes.Buffer
	if n := Print(&out, Run(fakeHost(t, files))); n != 0 || !strings.Contains(out.String(), "hybrid") {
		t.Fatalf("%d failures:\n%s", n, out.String())
	}
	files["/proc/cgroups"] = "#subsys_name\thierarchy\tnum_cgroups\tenabled\ncpu\t1\t15\t1\nmemory\t0\t52\t0\n"
	files["/proc/self/mountinfo"] = "30 1 0:24 / /sys/fs/cgroup/cpu rw - cgroup cgroup rw,cpu\n"
	out.Reset()
	if n := Print(&out, Run(fakeHost(t, files))); n != 1 || !strings.Contains(out.String(), "cgroup v2:                   MISSING (optional)") {
		t.Fatalf("%d failures:\n%s", n, out.String())
	}
}

func TestBrNetfilterSysctl(t *testing.T) {
	h := fakeHost(t, map[string]string{"/proc/sys/net/bridge/bridge-nf-call-iptables": "1\n"})
	if r := Module(h, "br_netfilter", "br_netfilter", true); !r.OK {
		t.Fatalf("result %+v", r)
	}
}

func TestNftOnly(t *testing.T) {
	h := fakeHost(t, map[string]string{"/bin/nft": ""})
	if r := Firewall(h); r.OK || !strings.Contains(r.Fix, "install iptables") {
		t.Fatalf("result %+v", r)
	}
}

func TestModuleStates(t *testing.T) {
	h := fakeHost(t, map[string]string{
		"/sys/module/br_netfilter/refcnt":          "0",
		"/lib/modules/" + rel + "/modules.builtin": "kernel/fs/overlayfs/overlay.ko\n",
		"/lib/modules/" + rel + "/modules.dep":     "kernel/drivers/net/vxlan/vxlan.ko.zst: kernel/net/ipv4/udp_tunnel.ko.zst\n",
	})
	for name, want := range map[string]string{"br_netfilter": "loaded", "overlay": "built-in", "vxlan": "loadable", "nosuch": ""} {
		if got := moduleState(h, name); got != want {
			t.Errorf("moduleState(%s) = %q, want %q", name, got, want)
		}
	}
}
