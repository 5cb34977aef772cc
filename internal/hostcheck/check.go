package hostcheck

import (
	"fmt"
	"io"
	"strings"
)

// Result is one check's outcome.
type Result struct {
	Name     string
	OK       bool
	Required bool   // a failure makes check-config exit non-zero
	Detail   string // what was found
	Fix      string // what to do when !OK
}

// Run runs every check against h.
func Run(h Host) []Result {
	return []Result{
		CgroupV2(h),
		CgroupController(h, "memory"),
		CgroupController(h, "cpu"),
		Overlay(h),
		Module(h, "vxlan", "vxlan", false),
		Module(h, "br_netfilter", "br_netfilter", true),
		Firewall(h),
		IPForward(h),
	}
}

// Print writes one line per result and the fixes under failing ones. It
// returns the number of failed required checks.
func Print(w io.Writer, rs []Result) int {
	failed := 0
	for _, r := range rs {
		status := "OK"
		if !r.OK {
			status = "MISSING"
			if !r.Required {
				status = "MISSING (optional)"
			} else {
				failed++
			}
		}
		fmt.Fprintf(w, "%-28s %s", r.Name+":", status)
		if r.Detail != "" {
			fmt.Fprintf(w, " (%s)", r.Detail)
		}
		fmt.Fprintln(w)
		if !r.OK && r.Fix != "" {
			for _, l := range strings.Split(r.Fix, "\n") {
				fmt.Fprintf(w, "    fix: %s\n", l)
			}
		}
	}
	return failed
}

// cgroup2Mount returns the mount point of the cgroup2 file system, or "".
func cgroup2Mount(h Host) string {
	b, err := h.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return ""
	}
	for _, line := range strings.Split(string(b), "\n") {
		pre, post, ok := strings.Cut(line, " - ")
		f, tail := strings.Fields(pre), strings.Fields(post)
		if ok && len(f) >= 5 && len(tail) >= 1 && tail[0] == "cgroup2" {
			return f[4]
		}
	}
	return ""
}

// v1Controllers returns the controllers /proc/cgroups lists as enabled and
// attached to a v1 hierarchy (hierarchy id != 0).
func v1Controllers(h Host) map[string]bool {
	out := map[string]bool{}
	b, err := h.ReadFile("/proc/cgroups")
	if err != nil {
		return out
	}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) == 4 && !strings.HasPrefix(f[0], "#") && f[1] != "0" && f[3] == "1" {
			out[f[0]] = true
		}
	}
	return out
}

// CgroupV2 checks that the unified cgroup hierarchy is mounted. orch also
// runs on v1 and hybrid hosts, so with v1 hierarchies in use a missing v2
// is reported but not required.
func CgroupV2(h Host) Result {
	r := Result{Name: "cgroup v2", Required: true}
	if m := cgroup2Mount(h); m != "" {
		r.OK, r.Detail = true, "mounted at "+m
		if len(v1Controllers(h)) > 0 {
			r.Detail += "; hybrid host, orch uses the v1 hierarchies"
		}
		return r
	}
	if len(v1Controllers(h)) > 0 {
		r.Required, r.Detail = false, "cgroup v1 host; orch uses v1"
	}
	r.Fix = "boot with the unified cgroup hierarchy: add systemd.unified_cgroup_hierarchy=1 to the kernel command line and reboot"
	return r
}

// CgroupController checks that ctrl is enabled in the root cgroup2, or in
// a v1 hierarchy on v1 and hybrid hosts.
func CgroupController(h Host, ctrl string) Result {
	r := Result{Name: "cgroup " + ctrl + " controller", Required: true}
	if m := cgroup2Mount(h); m != "" {
		if b, err := h.ReadFile(strings.TrimSuffix(m, "/") + "/cgroup.controllers"); err == nil {
			for _, c := range strings.Fields(string(b)) {
				if c == ctrl {
					r.OK, r.Detail = true, "cgroup v2"
					return r
				}
			}
		}
	}
	if v1Controllers(h)[ctrl] {
		r.OK, r.Detail = true, "cgroup v1"
		return r
	}
	r.Fix = cmdlineFix(h, ctrl)
	return r
}

// PiModel returns the Raspberry Pi model string from the device tree, or "".
func PiModel(h Host) string {
	for _, p := range []string{"/proc/device-tree/model", "/sys/firmware/devicetree/base/model"} {
		if b, err := h.ReadFile(p); err == nil {
			m := strings.TrimRight(string(b), "\x00\n ")
			if strings.Contains(m, "Raspberry Pi") {
				return m
			}
		}
	}
	return ""
}

// cmdlineFix tells how to enable a cgroup controller at boot.
func cmdlineFix(h Host, ctrl string) string {
	if ctrl != "memory" {
		return "enable the " + ctrl + " controller: add cgroup_enable=" + ctrl + " to the kernel command line and reboot"
	}
	if PiModel(h) != "" {
		file := "/boot/firmware/cmdline.txt"
		if !h.Exists(file) && h.Exists("/boot/cmdline.txt") {
			file = "/boot/cmdline.txt"
		}
		return "append \" cgroup_memory=1 cgroup_enable=memory\" to the single line in " + file + " and reboot:\n" +
			"sudo sed -i '$ s/$/ cgroup_memory=1 cgroup_enable=memory/' " + file + " && sudo reboot"
	}
	return "add cgroup_memory=1 cgroup_enable=memory to the kernel command line (GRUB_CMDLINE_LINUX in /etc/default/grub, then update-grub) and reboot"
}

// Overlay checks the overlay file system is registered or loadable.
func Overlay(h Host) Result {
	r := Result{Name: "overlay filesystem", Required: true}
	if b, err := h.ReadFile("/proc/filesystems"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			f := strings.Fields(line)
			if len(f) > 0 && f[len(f)-1] == "overlay" {
				r.OK, r.Detail = true, "registered"
				return r
			}
		}
	}
	if how := moduleState(h, "overlay"); how != "" {
		r.OK, r.Detail = true, how
		return r
	}
	r.Fix = "install a kernel with CONFIG_OVERLAY_FS, or: modprobe overlay"
	return r
}

// Module checks that a kernel module is loaded, built in or loadable.
func Module(h Host, name, label string, required bool) Result {
	r := Result{Name: label + " module", Required: required}
	if how := moduleState(h, name); how != "" {
		r.OK, r.Detail = true, how
		return r
	}
	r.Fix = "install the kernel modules package for " + h.KernelRelease() + " (e.g. linux-modules-extra-" + h.KernelRelease() + " on Ubuntu), then: modprobe " + name
	return r
}

// moduleState says "loaded", "built-in" or "loadable", or "" when none.
func moduleState(h Host, name string) string {
	if b, err := h.ReadFile("/proc/modules"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if f := strings.Fields(line); len(f) > 0 && f[0] == name {
				return "loaded"
			}
		}
	}
	if h.Exists("/sys/module/" + name) {
		return "loaded"
	}
	if name == "br_netfilter" && h.Exists("/proc/sys/net/bridge/bridge-nf-call-iptables") {
		return "active (bridge-nf-call-iptables present)"
	}
	dir := "/lib/modules/" + h.KernelRelease()
	if listsModule(h, dir+"/modules.builtin", name) {
		return "built-in"
	}
	if listsModule(h, dir+"/modules.dep", name) {
		return "loadable"
	}
	return ""
}

// listsModule tells whether a modules.builtin/modules.dep file names the
// module (kernel/.../name.ko, possibly compressed).
func listsModule(h Host, file, name string) bool {
	b, err := h.ReadFile(file)
	if err != nil {
		return false
	}
	for _, line := range strings.Split(string(b), "\n") {
		path, _, _ := strings.Cut(line, ":")
		base := path[strings.LastIndex(path, "/")+1:]
		base, _, _ = strings.Cut(base, ".ko")
		if strings.ReplaceAll(base, "-", "_") == name {
			return true
		}
	}
	return false
}

// Firewall checks for the iptables commands orch runs (iptables,
// iptables-nft or iptables-legacy; nft alone is not enough) and reports
// the backend of plain iptables.
func Firewall(h Host) Result {
	r := Result{Name: "iptables/nft", Required: true}
	var found []string
	for _, b := range []string{"iptables", "iptables-nft", "iptables-legacy", "nft"} {
		if _, err := h.LookPath(b); err == nil {
			found = append(found, b)
		}
	}
	if len(found) == 0 || (len(found) == 1 && found[0] == "nft") {
		r.Detail = strings.Join(found, ", ")
		r.Fix = "install iptables: apt-get install iptables (Debian, Ubuntu, Raspberry Pi OS), apk add iptables (Alpine), dnf install iptables-nft"
		return r
	}
	r.OK = true
	r.Detail = "found " + strings.Join(found, ", ") + "; iptables backend " + backend(h)
	return r
}

// backend tells which backend the plain iptables command uses.
func backend(h Host) string {
	p, err := h.LookPath("iptables")
	if err != nil {
		return "n/a (no plain iptables command)"
	}
	if target, err := readlinkAll(p); err == nil {
		switch {
		case strings.Contains(target, "legacy"):
			return "legacy"
		case strings.Contains(target, "nft"):
			return "nft"
		}
	}
	return "unknown (" + p + ")"
}

// IPForward checks the ip_forward sysctl exists (orch sets it to 1).
func IPForward(h Host) Result {
	r := Result{Name: "ip_forward", Required: true}
	b, err := h.ReadFile("/proc/sys/net/ipv4/ip_forward")
	if err != nil {
		r.Fix = "enable IPv4 networking in the kernel (CONFIG_INET); /proc/sys/net/ipv4/ip_forward is missing"
		return r
	}
	r.OK = true
	if strings.TrimSpace(string(b)) == "1" {
		r.Detail = "enabled"
	} else {
		r.Detail = "off; orch enables it at start"
	}
	return r
}
