package hostclean

import (
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"

	"github.com/vishvananda/netns"
)

// TestIPTablesChains creates chains and a jump in a throwaway network
// namespace and checks that only the prefixed ones are removed.
func TestIPTablesChains(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root")
	}
	if _, err := exec.LookPath("iptables"); err != nil {
		t.Skip("no iptables")
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	orig, err := netns.Get()
	if err != nil {
		t.Fatal(err)
	}
	defer orig.Close()
	ns, err := netns.New() // switches this thread into it
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = netns.Set(orig); ns.Close() }()
	run := func(args ...string) {
		if out, err := exec.Command("iptables", args...).CombinedOutput(); err != nil {
			t.Fatalf("iptables %v: %v %s", args, err, out)
		}
	}
	run("-t", "nat", "-N", "HCTEST-A")
	run("-t", "nat", "-N", "HCTEST-B")
	run("-t", "nat", "-A", "HCTEST-A", "-j", "HCTEST-B")
	run("-t", "nat", "-I", "PREROUTING", "-m", "comment", "--comment", "a comment with spaces", "-j", "HCTEST-A")
	run("-t", "nat", "-N", "KEEP-ME")
	run("-t", "nat", "-A", "PREROUTING", "-j", "KEEP-ME")
	IPTablesChains(t.Logf, "HCTEST-")
	out, err := exec.Command("iptables-save", "-t", "nat").Output()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(out), "HCTEST-") || !strings.Contains(string(out), "-A PREROUTING -j KEEP-ME") {
		t.Fatalf("after cleanup:\n%s", out)
	}
}
