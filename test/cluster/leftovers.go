package cluster

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/orch/orch/test/hostclean"
)

// Leftovers lists what the cluster left on the host: network namespaces,
// links, mounts, cgroups, processes and directories named after its ID.
// Empty after Down.
func (c *Cluster) Leftovers() []string {
	var out []string
	id := c.ID
	if ns, err := os.ReadDir("/run/netns"); err == nil {
		for _, e := range ns {
			if strings.HasPrefix(e.Name(), "otc-"+id+"-") || strings.HasPrefix(e.Name(), "otc"+id+"n") {
				out = append(out, "netns "+e.Name())
			}
		}
	}
	if links, err := exec.Command("ip", "-o", "link", "show").Output(); err == nil {
		for _, l := range strings.Split(string(links), "\n") {
			if f := strings.Fields(l); len(f) > 1 && strings.HasPrefix(f[1], "otc"+id) {
				out = append(out, "link "+strings.TrimSuffix(f[1], ":"))
			}
		}
	}
	for _, m := range hostclean.MountsUnder("/run/orch-tc-"+id, c.Dir, "/run/netns/otc"+id) {
		out = append(out, "mount "+m)
	}
	for i := range c.Nodes {
		for _, d := range hostclean.CgroupDirs(fmt.Sprintf("otc-%s-n%d", id, i+1)) {
			out = append(out, "cgroup "+d)
		}
	}
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range procs {
		b, err := os.ReadFile(p)
		cmdline := strings.ReplaceAll(string(b), "\x00", " ")
		if err == nil && (strings.Contains(cmdline, "/run/orch-tc-"+id+"/") || strings.Contains(cmdline, c.Dir+"/")) {
			out = append(out, fmt.Sprintf("process %s: %s", filepath.Base(filepath.Dir(p)), cmdline))
		}
	}
	for _, d := range []string{"/run/orch-tc-" + id, c.Dir} {
		if _, err := os.Stat(d); err == nil {
			out = append(out, "dir "+filepath.Clean(d))
		}
	}
	return out
}
