package install

import (
	"sort"
	"strings"
	"testing"
)

// snapshot is what a box holds that orch could leave behind: files,
// network links, iptables chains, mounts, cgroups and processes, each a
// set of lines.
type snapshot map[string]map[string]bool

// snapshotScripts list each kind, one item a line, as seen inside the box.
var snapshotScripts = map[string]string{
	"file": `find / /run -xdev \( -path /proc -o -path /sys -o -path /dev -o -path /tmp -o -path /var/tmp \) -prune -o -print`,
	"link": `ip -o link show | awk -F': ' '{ sub(/@.*/, "", $2); print $2 }'`,
	// Custom chains and every rule; built-in chains appear by themselves
	// once a table is first used.
	"chain": `for c in iptables-legacy iptables-nft ip6tables-legacy ip6tables-nft; do $c-save 2>/dev/null |
		awk -v c=$c '/^\*/ { t = $1 } /^:/ && $1 !~ /^:(INPUT|OUTPUT|FORWARD|PREROUTING|POSTROUTING)$/ { print c, t, $1 } /^-A/ { print c, t, $0 }'; done`,
	"mount":   `awk '{ print $5 }' /proc/self/mountinfo`,
	"cgroup":  `for c in cpu cpuacct cpuset memory devices freezer blkio pids; do find /sys/fs/cgroup/$c -type d; done`,
	"process": `ps -e -o comm= | grep -v -x -e ps -e sh -e env -e nsenter -e awk -e grep`,
}

// volatile are the paths a booted Debian changes by itself (journal,
// systemd's state, apt's and dpkg's books) and the test's kubectl cache.
var volatile = []string{"/var/log/", "/var/lib/systemd/", "/run/systemd/", "/run/user/", "/run/log/",
	"/var/cache/apt/", "/var/lib/apt/", "/var/lib/dpkg/", "/var/cache/debconf/", "/var/cache/ldconfig/",
	"/etc/ld.so.cache", "/run/utmp", "/run/dbus/", "/run/lock/", "/var/lib/dbus/", "/etc/machine-id", "/run/mount/",
	"/run/agetty.reload", // getty's, on boot
	"/root/.kube/",       // kubectl's discovery cache from the test's own commands
}

func takeSnapshot(t *testing.T, m *machine) snapshot {
	t.Helper()
	s := snapshot{}
	for kind, script := range snapshotScripts {
		s[kind] = map[string]bool{}
		for _, line := range strings.Split(m.sh(t, script), "\n") {
			if line == "" || (kind == "file" && isVolatile(line)) {
				continue
			}
			s[kind][line] = true
		}
	}
	return s
}

func isVolatile(path string) bool {
	for _, p := range volatile {
		if strings.HasPrefix(path, p) || path+"/" == p {
			return true
		}
	}
	return false
}

// added lists what after holds and s does not, per kind, skipping the
// items allowed says may stay.
func (s snapshot) added(after snapshot, allowed func(kind, item string) bool) []string {
	var out []string
	for kind, items := range after {
		for item := range items {
			if !s[kind][item] && (allowed == nil || !allowed(kind, item)) {
				out = append(out, kind+" "+item)
			}
		}
	}
	sort.Strings(out)
	return out
}

// removed lists what s holds and after does not.
func (s snapshot) removed(after snapshot) []string {
	return after.added(s, nil)
}
