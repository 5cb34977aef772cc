package twoinstances

import (
	"context"
	"crypto/rand"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/orch/orch/internal/hostnames"
	"github.com/orch/orch/test/testutil"
)

// TestTwoInstances is the proof of issue 12: two `orch server`s with
// their agents on one host, told apart by data dir, ports and CIDRs only.
func TestTwoInstances(t *testing.T) {
	requireHost(t)
	defaults := defaultObjects()
	b := make([]byte, 1)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	third := 2 * (int(b[0]) % 120) // two /24s of 10.246/16 and 10.247/16 of this run's own
	a, c := newInstance(t, "a", third), newInstance(t, "b", third+1)
	checkNamesDiffer(t, a.names, c.names)
	a.start()
	c.start()

	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	for _, in := range []*instance{a, c} {
		if err := in.connect(ctx); err != nil {
			t.Fatalf("%s: %v\n%s", in.name, err, in.log())
		}
		if err := in.createPod(ctx); err != nil {
			t.Fatalf("%s: %v", in.name, err)
		}
	}
	waitBoth(ctx, t, a, c)
	for _, in := range []*instance{a, c} {
		objs := in.objects()
		t.Logf("%s (%s): %d host objects", in.name, in.dataDir, len(objs))
		for _, kind := range []string{"link " + in.names.Bridge, "link " + in.names.DNSLink, "port ", "netns ",
			"chain ", "cgroup ", "proc ", "dir ", "socket "} {
			if !hasPrefix(objs, kind) {
				t.Errorf("%s: no %q among its host objects: %q", in.name, kind, objs)
			}
		}
	}

	// A third server reusing a's cluster CIDR must not start, nor one
	// reusing only b's service CIDR (b's cluster DNS address is in it).
	clash := newInstance(t, "clash", third)
	expectClash(t, clash, "link "+a.names.Bridge, "--cluster-cidr")
	svcClash := newInstance(t, "svcclash", third)
	svcClash.clusterCIDR = fmt.Sprintf("10.248.%d.0/24", third)
	svcClash.serviceCIDR, svcClash.clusterDNS = c.serviceCIDR, c.clusterDNS
	expectClash(t, svcClash, "link "+c.names.DNSLink, "--service-cidr")

	killall := installKillall(t, a.bin)
	cBefore := c.objects()
	runKillall(t, killall, a)
	if left := a.objects(); len(left) > 0 {
		t.Errorf("orch-killall.sh left of a: %q", left)
	}
	if got := c.objects(); !samePersistent(got, cBefore) {
		t.Errorf("orch-killall.sh for a touched b:\nbefore %q\nafter  %q", cBefore, got)
	}
	if ready, phase := c.state(ctx); !ready || phase != corev1.PodRunning {
		t.Errorf("b after a's cleanup: node ready %v, pod %q", ready, phase)
	}
	runKillall(t, killall, c)
	if left := c.objects(); len(left) > 0 {
		t.Errorf("orch-killall.sh left of b: %q", left)
	}
	if got := defaultObjects(); !reflect.DeepEqual(got, defaults) {
		t.Errorf("the default instance's names changed on the host:\nbefore %q\nafter  %q", defaults, got)
	}
}

// expectClash starts in, which must fail at start with an error naming
// each of wants, and leave nothing on the host.
func expectClash(t *testing.T, in *instance, wants ...string) {
	t.Helper()
	in.start()
	if err := in.waitExit(3 * time.Minute); err != nil {
		t.Fatalf("%s did not fail: %v", in.name, err)
	}
	out := in.log()
	for _, w := range wants {
		if !strings.Contains(out, w) {
			t.Errorf("%s's error does not name %q:\n%s", in.name, w, out)
		}
	}
	for _, line := range strings.Split(out, "\n") {
		if strings.Contains(line, wants[0]) {
			t.Logf("%s failed at start: %s", in.name, line)
		}
	}
	if left := in.objects(); len(left) > 0 {
		t.Errorf("%s left host objects: %q", in.name, left)
	}
}

// checkNamesDiffer checks that the two instances share no host-global
// name and neither uses a default one.
func checkNamesDiffer(t *testing.T, x, y hostnames.Names) {
	t.Helper()
	def := hostnames.For("")
	for _, f := range []func(hostnames.Names) string{
		func(n hostnames.Names) string { return n.RunDir }, func(n hostnames.Names) string { return n.ContainerdStateDir },
		func(n hostnames.Names) string { return n.FIFODir }, func(n hostnames.Names) string { return n.Bridge },
		func(n hostnames.Names) string { return n.DNSLink }, func(n hostnames.Names) string { return n.VXLANDevice },
		func(n hostnames.Names) string { return n.NetnsPrefix }, func(n hostnames.Names) string { return n.ChainPrefix },
		func(n hostnames.Names) string { return n.CgroupRoot },
	} {
		if f(x) == f(y) || f(x) == f(def) || f(y) == f(def) {
			t.Fatalf("shared name: %q %q (default %q)", f(x), f(y), f(def))
		}
	}
}

// waitBoth waits until both nodes are Ready and both pods Running at the
// same time.
func waitBoth(ctx context.Context, t *testing.T, ins ...*instance) {
	t.Helper()
	for {
		all := true
		var states []string
		for _, in := range ins {
			if in.exited() {
				t.Fatalf("%s exited:\n%s", in.name, in.log())
			}
			ready, phase := in.state(ctx)
			all = all && ready && phase == corev1.PodRunning
			states = append(states, in.name+": ready="+boolStr(ready)+" pod="+string(phase))
		}
		if all {
			t.Logf("both at once: %s", strings.Join(states, ", "))
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("not both Ready and Running: %s", strings.Join(states, ", "))
		case <-time.After(time.Second):
		}
	}
}

func boolStr(b bool) string {
	if b {
		return "true"
	}
	return "false"
}

func hasPrefix(list []string, p string) bool {
	for _, s := range list {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

// samePersistent compares two object lists ignoring processes (the
// agent's probes and execs come and go).
func samePersistent(x, y []string) bool {
	strip := func(l []string) []string {
		var out []string
		for _, s := range l {
			if !strings.HasPrefix(s, "proc ") {
				out = append(out, s)
			}
		}
		return out
	}
	return reflect.DeepEqual(strip(x), strip(y))
}

// defaultObjects lists which of the default instance's objects exist, so
// the test can show it created none (whether or not a live orch runs).
func defaultObjects() []string {
	def := hostnames.For("")
	var out []string
	for _, p := range []string{def.RunDir, def.DataDir, "/sys/class/net/" + def.Bridge, "/sys/class/net/" + def.DNSLink,
		"/sys/class/net/" + def.VXLANDevice} {
		if _, err := os.Stat(p); err == nil {
			out = append(out, p)
		}
	}
	return out
}

// installKillall writes orch-killall.sh with scripts/install.sh under a
// fresh root (as test/killall does) and returns its path.
func installKillall(t *testing.T, bin string) string {
	t.Helper()
	repo, err := testutil.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	cmd := exec.Command("sh", filepath.Join(repo, "scripts", "install.sh"))
	cmd.Env = append(env(), "ORCH_ROOT="+root, "ORCH_BINARY="+bin, "INSTALL_ORCH_SYSTEMD=false")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("install.sh: %v\n%s", err, out)
	}
	return filepath.Join(root, "usr", "local", "bin", "orch-killall.sh")
}

// runKillall runs `ORCH_DATA_DIR=X orch-killall.sh`, the way
// docs/instances.md tells users to: the script takes the instance's names
// from `orch host-names` and kills only the processes of that data dir,
// though both instances run the same binary.
func runKillall(t *testing.T, script string, in *instance) {
	t.Helper()
	cmd := exec.Command("sh", "-c", `ORCH_DATA_DIR="$2" ORCH_BIN="$1" "$3"`, "sh", in.bin, in.dataDir, script)
	cmd.Env = env()
	out, err := cmd.CombinedOutput()
	t.Logf("orch-killall.sh for %s: %v\n%s", in.name, err, out)
	if err != nil {
		t.Fatalf("orch-killall.sh for %s: %v", in.name, err)
	}
	if err := in.waitExit(30 * time.Second); err != nil {
		t.Errorf("after orch-killall.sh: %v", err)
	}
}
