package network

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"go.uber.org/zap/zaptest"
	"golang.org/x/sys/unix"
)

// testEnv is one isolated pod network: its own bridge (orcht<hex>), pod
// CIDR (10.250.<n>.0/24), netns dir, ipam dir and iptables chains, all
// removed in t.Cleanup even when the test fails.
type testEnv struct {
	m       *Manager
	cfg     Config
	suffix  string
	runDir  string
	podIDs  map[string]bool
	octet   int
	cleanup []func()
}

func requireRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("skipping: host network tests need root (netns, veth, bridge, iptables)")
	}
}

func randHex(t *testing.T, n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}

func newTestEnv(t *testing.T) *testEnv {
	t.Helper()
	requireRoot(t)
	suffix := randHex(t, 3)
	rb := make([]byte, 1)
	if _, err := rand.Read(rb); err != nil {
		t.Fatal(err)
	}
	octet := 1 + int(rb[0])%250 // 10.250.<octet>.0/24, never 10.42
	e := &testEnv{suffix: suffix, runDir: "/run/orcht-" + suffix, podIDs: map[string]bool{}, octet: octet}
	e.cfg = Config{
		BridgeName:  "orcht" + suffix,
		PodCIDR:     fmt.Sprintf("10.250.%d.0/24", octet),
		ClusterCIDR: "10.250.0.0/16",
		IPAMDir:     t.TempDir(),
		NetnsDir:    filepath.Join(e.runDir, "netns"),
		NetnsPrefix: "orcht-",
		NATChain:    "ORCHT-" + suffix + "-POST",
		FilterChain: "ORCHT-" + suffix + "-FWD",
		// HostPortPrefix keeps the hostPort chains apart from a live orch's.
		HostPortPrefix: "OT" + suffix + "-",
	}
	restore := saveSysctls(t, SysctlIPForward, SysctlBridgeNFCallIP)
	m, err := New(zaptest.NewLogger(t), e.cfg)
	if err != nil {
		t.Fatal(err)
	}
	e.m = m
	t.Cleanup(func() { e.teardownAll(t); restore() })
	return e
}

// teardownAll removes everything the env may have created, reporting but
// not stopping at errors.
func (e *testEnv) teardownAll(t *testing.T) {
	for i := len(e.cleanup) - 1; i >= 0; i-- {
		e.cleanup[i]()
	}
	for id := range e.podIDs {
		if err := e.m.TeardownPod(context.Background(), id); err != nil {
			t.Errorf("cleanup teardown %s: %v", id, err)
		}
		_ = deleteLink(HostVethName(id))
	}
	if err := e.m.Cleanup(); err != nil {
		t.Errorf("cleanup iptables: %v", err)
	}
	if err := deleteLink(e.cfg.BridgeName); err != nil {
		t.Errorf("cleanup bridge: %v", err)
	}
	for _, mp := range mountsUnder(t, e.runDir) {
		if err := unix.Unmount(mp, unix.MNT_DETACH); err != nil {
			t.Errorf("cleanup unmount %s: %v", mp, err)
		}
	}
	if err := os.RemoveAll(e.runDir); err != nil {
		t.Errorf("cleanup %s: %v", e.runDir, err)
	}
	e.m.Close()
}

func saveSysctls(t *testing.T, paths ...string) func() {
	old := map[string][]byte{}
	for _, p := range paths {
		if b, err := os.ReadFile(p); err == nil {
			old[p] = b
		}
	}
	return func() {
		for p, b := range old {
			if cur, _ := os.ReadFile(p); string(cur) != string(b) {
				if err := os.WriteFile(p, b, 0o644); err != nil {
					t.Errorf("restore %s: %v", p, err)
				}
			}
		}
	}
}

// mountsUnder lists mount points at or below dir, deepest first.
func mountsUnder(t *testing.T, dir string) []string {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) > 4 && (fields[4] == dir || strings.HasPrefix(fields[4], dir+"/")) {
			out = append(out, fields[4])
		}
	}
	sort.Slice(out, func(i, j int) bool { return len(out[i]) > len(out[j]) })
	return out
}

func (e *testEnv) newPodID(t *testing.T) string {
	id := fmt.Sprintf("%s-%s-%s", randHex(t, 4), randHex(t, 2), randHex(t, 6))
	e.podIDs[id] = true
	return id
}

func (e *testEnv) setup(t *testing.T, id string, ports ...PortMapping) *PodNetStatus {
	t.Helper()
	st, err := e.m.SetupPod(t.Context(), PodNet{ID: id, Name: "p-" + id[:4], Namespace: "default", Ports: ports})
	if err != nil {
		t.Fatalf("SetupPod(%s): %v", id, err)
	}
	return st
}

// assertPodGone checks that no veth, namespace, mount or IP of the pod is left.
func (e *testEnv) assertPodGone(t *testing.T, id string) {
	t.Helper()
	if _, err := netlink.LinkByName(HostVethName(id)); !isNotFound(err) {
		t.Errorf("veth %s still present (err=%v)", HostVethName(id), err)
	}
	path := e.m.NetnsPath(id)
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("netns file %s still present (err=%v)", path, err)
	}
	if mps := mountsUnder(t, path); len(mps) != 0 {
		t.Errorf("mounts left at %s: %v", path, mps)
	}
	if ip, ok, _ := e.m.IPAM().Get(id); ok {
		t.Errorf("IP %s still allocated to %s", ip, id)
	}
}

// assertNothingLeft checks the bridge has no ports, the netns dir is empty
// and nothing is allocated.
func (e *testEnv) assertNothingLeft(t *testing.T) {
	t.Helper()
	if br, err := bridgeByName(e.cfg.BridgeName); err == nil {
		links, _ := netlink.LinkList()
		for _, l := range links {
			if l.Attrs().MasterIndex == br.Attrs().Index {
				t.Errorf("bridge port left: %s", l.Attrs().Name)
			}
		}
	}
	entries, _ := os.ReadDir(e.cfg.NetnsDir)
	for _, en := range entries {
		t.Errorf("netns left: %s", en.Name())
	}
	if mps := mountsUnder(t, e.cfg.NetnsDir); len(mps) > 1 { // the dir's own shared bind mount
		t.Errorf("mounts left: %v", mps)
	}
	list, _ := e.m.IPAM().List()
	if len(list) != 0 {
		t.Errorf("IPs left: %+v", list)
	}
}

// inNetns runs f on a locked OS thread inside the namespace at path.
func inNetns(path string, f func() error) error {
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		orig, err := netns.Get()
		if err != nil {
			errc <- err
			return
		}
		defer orig.Close()
		ns, err := netns.GetFromPath(path)
		if err != nil {
			errc <- err
			return
		}
		defer ns.Close()
		if err := netns.Set(ns); err != nil {
			errc <- err
			return
		}
		err = f()
		if netns.Set(orig) == nil {
			runtime.UnlockOSThread() // else the thread dies with the goroutine
		}
		errc <- err
	}()
	return <-errc
}

// listenIn opens a TCP listener inside the namespace (the socket stays in
// it) that answers each connection with the peer address it saw.
func listenIn(t *testing.T, nsPath, addr string) net.Listener {
	t.Helper()
	var ln net.Listener
	listen := func() error {
		var err error
		ln, err = net.Listen("tcp4", addr)
		return err
	}
	var err error
	if nsPath == "" {
		err = listen()
	} else {
		err = inNetns(nsPath, listen)
	}
	if err != nil {
		t.Fatalf("listen %s in %q: %v", addr, nsPath, err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			fmt.Fprintf(c, "%s\n", c.RemoteAddr())
			c.Close()
		}
	}()
	return ln
}

// dialFrom connects from inside the namespace and returns the source
// address the server reported.
func dialFrom(nsPath, addr string) (string, error) {
	var seen string
	err := inNetns(nsPath, func() error {
		c, err := net.DialTimeout("tcp4", addr, 3*time.Second)
		if err != nil {
			return err
		}
		defer c.Close()
		_ = c.SetDeadline(time.Now().Add(3 * time.Second))
		b, err := io.ReadAll(c)
		seen = strings.TrimSpace(string(b))
		return err
	})
	return seen, err
}

// ping runs busybox ping inside the namespace via nsenter, when available.
func ping(t *testing.T, nsPath, ip string) {
	t.Helper()
	bb, err := exec.LookPath("busybox")
	if err != nil {
		t.Log("busybox not installed; ICMP check skipped (TCP checks still run)")
		return
	}
	out, err := exec.Command("nsenter", "--net="+nsPath, bb, "ping", "-c1", "-W2", ip).CombinedOutput()
	if err != nil {
		t.Fatalf("ping %s from %s: %v\n%s", ip, nsPath, err, out)
	}
}
