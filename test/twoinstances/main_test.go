package twoinstances

import (
	"os"
	"os/exec"
	"testing"

	testimages "github.com/orch/orch/test/images"
	"github.com/orch/orch/test/testutil"
)

func TestMain(m *testing.M) { testutil.Main(m) }

// requireHost skips unless the test can run pods: root, containerd, runc
// and the tools orch-killall.sh uses.
func requireHost(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("skipping in -short mode: runs two servers with containerd")
	}
	if os.Geteuid() != 0 {
		t.Skip("skipping: needs root (links, netns, mounts, iptables, cgroups)")
	}
	for _, bin := range []string{"containerd", "runc", "containerd-shim-runc-v2", "ip", "iptables", "sh"} {
		if _, err := exec.LookPath(bin); err != nil {
			t.Skipf("skipping: %s not in PATH", bin)
		}
	}
	if _, err := os.Stat(testimages.BusyboxPath); err != nil {
		t.Skipf("skipping: %s missing", testimages.BusyboxPath)
	}
}
