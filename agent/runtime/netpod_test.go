package runtime

import (
	"context"
	"crypto/rand"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vishvananda/netlink"
	"go.uber.org/zap/zaptest"

	"github.com/orch/orch/agent/network"
)

// podNetwork sets up agent/network on a test bridge (orcht<hex>, pod CIDR
// 10.251.<n>.0/24, own netns dir and iptables chains) and removes it all on
// cleanup, restoring the sysctls EnsureHost changes.
func podNetwork(t *testing.T) *network.Manager {
	t.Helper()
	suffix := randHex(3)
	b := make([]byte, 1)
	_, _ = rand.Read(b)
	runDir := "/run/orcht-net-" + suffix
	cfg := network.Config{
		BridgeName: "orcht" + suffix, PodCIDR: fmt.Sprintf("10.251.%d.0/24", 1+int(b[0])%250),
		ClusterCIDR: "10.251.0.0/16", IPAMDir: t.TempDir(), NetnsDir: filepath.Join(runDir, "netns"),
		NetnsPrefix: "orcht-", NATChain: "ORCHT-" + suffix + "-POST", FilterChain: "ORCHT-" + suffix + "-FWD",
	}
	restore := saveFiles(network.SysctlIPForward, network.SysctlBridgeNFCallIP)
	m, err := network.New(zaptest.NewLogger(t), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if ids, err := m.PodIDs(); err == nil {
			for _, id := range ids {
				if err := m.TeardownPod(context.Background(), id); err != nil {
					t.Errorf("teardown pod network: %v", err)
				}
			}
		}
		if err := m.Cleanup(); err != nil {
			t.Errorf("iptables cleanup: %v", err)
		}
		if l, err := netlink.LinkByName(cfg.BridgeName); err == nil {
			_ = netlink.LinkDel(l)
		}
		unmountUnder(runDir)
		_ = os.RemoveAll(runDir)
		m.Close()
		restore()
	})
	if err := m.EnsureHost(); err != nil {
		t.Fatal(err)
	}
	return m
}

func saveFiles(paths ...string) func() {
	old := map[string][]byte{}
	for _, p := range paths {
		if b, err := os.ReadFile(p); err == nil {
			old[p] = b
		}
	}
	return func() {
		for p, b := range old {
			if cur, _ := os.ReadFile(p); string(cur) != string(b) {
				_ = os.WriteFile(p, b, 0o644)
			}
		}
	}
}

// TestPodsOnBridge runs two pods whose namespaces agent/network made: a web
// server in one is reached from the other over the bridge at its pod IP.
func TestPodsOnBridge(t *testing.T) {
	d := sharedDaemon(t)
	r := newRuntime(t, d)
	m := podNetwork(t)
	ctx := context.Background()
	var pods []testPod
	var ips []string
	for i := 0; i < 2; i++ {
		p := newPod(t, false)
		st, err := m.SetupPod(ctx, network.PodNet{ID: p.uid, Name: p.name, Namespace: "default", Hostname: p.name})
		if err != nil {
			t.Fatal(err)
		}
		p.netns = st.NetnsPath
		pods = append(pods, p)
		ips = append(ips, st.IP.IP.String())
	}
	srv := pods[0].spec("web", "httpd", "-f", "-p", "80", "-h", "/www")
	run(t, r, srv)
	waitState(t, r, srv.ID, StateRunning, 20*time.Second)
	cli := pods[1].spec("client", "sh", "-c",
		"for i in $(seq 50); do wget -q -O - http://"+ips[0]+"/ && exit 0; sleep 0.1; done; exit 1")
	run(t, r, cli)
	st := waitState(t, r, cli.ID, StateExited, 60*time.Second)
	b, _ := os.ReadFile(st.LogPath)
	if st.ExitCode != 0 || !strings.Contains(string(b), "hello from orch busybox") {
		t.Fatalf("client exit %d:\n%s", st.ExitCode, b)
	}
}
