package cluster

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	testimages "github.com/orch/orch/test/images"
	"github.com/orch/orch/test/testutil"
)

// Options shape the cluster. Zero values take the defaults.
type Options struct {
	Nodes   int    // default 3 (node 1 also runs the server)
	Backend string // --network-backend: vxlan (default) or host-gw
	// Busybox drops the busybox test image (also named nginx:1.25) into
	// every node's air-gap images dir.
	Busybox bool
	// Servers > 1 runs an `orch server` on nodes 1..Servers (one HA
	// control plane; the agents join node 1's).
	Servers int
}

// Node is one node of the cluster.
type Node struct {
	Name  string
	IP    string
	Netns string
}

// Cluster is a running test cluster.
type Cluster struct {
	t          testing.TB
	ID         string
	Dir        string // data dirs and logs
	Server     string // https://<node 1 IP>:6443
	Kubeconfig string // admin kubeconfig reaching Server from the host
	Nodes      []Node
	Client     kubernetes.Interface
}

// Script returns the path of scripts/testcluster.sh.
func Script() (string, error) {
	root, err := testutil.RepoRoot()
	if err != nil {
		return "", err
	}
	return filepath.Join(root, "scripts", "testcluster.sh"), nil
}

// RequireHost skips the test unless it runs as root with what the nodes need.
func RequireHost(t testing.TB) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("skipping: the multi-node tests need root (netns, bridge, iptables, cgroups, containerd)")
	}
	for _, bin := range []string{"containerd", "runc", "containerd-shim-runc-v2", "iptables", "ip", "nsenter", "setsid"} {
		if _, err := exec.LookPath(bin); err != nil {
			t.Skipf("skipping: %s not in PATH (scripts/install-deps.sh installs it)", bin)
		}
	}
}

// Start builds the cluster and waits until every node is Ready and
// untainted; the cluster is torn down in t.Cleanup.
func Start(t testing.TB, o Options) *Cluster {
	t.Helper()
	RequireHost(t)
	if o.Nodes == 0 {
		o.Nodes = 3
	}
	if o.Backend == "" {
		o.Backend = "vxlan"
	}
	b := make([]byte, 3)
	_, _ = rand.Read(b)
	id := hex.EncodeToString(b)
	c := &Cluster{t: t, ID: id, Dir: filepath.Join(os.TempDir(), "orch-tc-"+id)} // the script's ${TMPDIR:-/tmp}
	args := []string{"up", "--name", c.ID, "--nodes", strconv.Itoa(o.Nodes), "--backend", o.Backend,
		"--binary", testutil.Binary(t)}
	if o.Servers > 1 {
		args = append(args, "--servers", strconv.Itoa(o.Servers))
	}
	if o.Busybox {
		img := testimages.BuildBusybox(t, t.TempDir(), "docker.io/library/busybox:1.36", "docker.io/library/nginx:1.25")
		args = append(args, "--image", img)
	}
	hostKC := statHostKubeconfig()
	t.Cleanup(func() {
		if t.Failed() {
			c.dumpLogs()
		}
		if err := c.Down(); err != nil {
			t.Errorf("tearing the test cluster down: %v", err)
		}
		if now := statHostKubeconfig(); now != hostKC {
			t.Errorf("the cluster wrote the host's %s (%s before, %s after): every server needs --write-kubeconfig",
				hostKubeconfig, hostKC, now)
		}
	})
	out, err := c.script(args...)
	if err != nil {
		t.Fatalf("testcluster.sh up: %v\n%s", err, out)
	}
	c.parse(out)
	cfg, err := clientcmd.BuildConfigFromFlags("", c.Kubeconfig)
	if err != nil {
		t.Fatalf("loading %s: %v", c.Kubeconfig, err)
	}
	if c.Client, err = kubernetes.NewForConfig(cfg); err != nil {
		t.Fatal(err)
	}
	c.waitReady(90 * time.Second)
	return c
}

func (c *Cluster) script(args ...string) (string, error) {
	s, err := Script()
	if err != nil {
		return "", err
	}
	c.t.Logf("scripts/testcluster.sh %s", strings.Join(args, " "))
	out, err := exec.Command("bash", append([]string{s}, args...)...).CombinedOutput()
	return string(out), err
}

// parse reads the KEY=value lines `up` prints.
func (c *Cluster) parse(out string) {
	vars := map[string]string{}
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), "="); ok {
			vars[k] = v
		}
	}
	c.Server, c.Kubeconfig = vars["SERVER"], vars["KUBECONFIG"]
	for i := 1; vars[fmt.Sprintf("NODE_%d_NAME", i)] != ""; i++ {
		p := fmt.Sprintf("NODE_%d_", i)
		c.Nodes = append(c.Nodes, Node{Name: vars[p+"NAME"], IP: vars[p+"IP"], Netns: vars[p+"NETNS"]})
	}
}

// schedulable: Ready, with a pod CIDR, and without the not-ready or
// unreachable taints the node lifecycle controller puts on a node that
// registered before its network was up (it lifts them right after Ready;
// until then the scheduler would leave the node out).
func schedulable(n *corev1.Node) bool {
	for _, t := range n.Spec.Taints {
		if t.Key == corev1.TaintNodeNotReady || t.Key == corev1.TaintNodeUnreachable {
			return false
		}
	}
	for _, cond := range n.Status.Conditions {
		if cond.Type == corev1.NodeReady {
			return cond.Status == corev1.ConditionTrue && n.Spec.PodCIDR != ""
		}
	}
	return false
}

func (c *Cluster) waitReady(timeout time.Duration) {
	c.t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		ready := 0
		list, err := c.Client.CoreV1().Nodes().List(context.Background(), metav1.ListOptions{})
		if err == nil {
			for i := range list.Items {
				if schedulable(&list.Items[i]) {
					ready++
				}
			}
		}
		if ready == len(c.Nodes) {
			return
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("%d of %d nodes Ready after %v (last error: %v)", ready, len(c.Nodes), timeout, err)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// StopNode kills node i's (1-based) orch processes and containers; its
// netns and addresses stay until Down.
func (c *Cluster) StopNode(i int) {
	c.t.Helper()
	if out, err := c.script("stop-node", "--name", c.ID, "--node", strconv.Itoa(i)); err != nil {
		c.t.Fatalf("testcluster.sh stop-node: %v\n%s", err, out)
	}
}

// Down tears the cluster down (idempotent).
func (c *Cluster) Down() error {
	out, err := c.script("down", "--name", c.ID)
	if err != nil {
		return fmt.Errorf("%w\n%s", err, out)
	}
	return nil
}

// InNode runs a command in node i's network namespace (1-based).
func (c *Cluster) InNode(i int, name string, args ...string) (string, error) {
	out, err := exec.Command("nsenter", append([]string{"--net=/run/netns/" + c.Nodes[i-1].Netns, "--", name}, args...)...).CombinedOutput()
	return string(out), err
}

// dumpLogs logs the tail of every process log.
func (c *Cluster) dumpLogs() {
	logs, _ := filepath.Glob(filepath.Join(c.Dir, "logs", "*.log"))
	for _, l := range logs {
		b, _ := os.ReadFile(l)
		if len(b) > 6000 {
			b = b[len(b)-6000:]
		}
		c.t.Logf("--- %s (tail) ---\n%s", filepath.Base(l), bytes.TrimSpace(b))
	}
}

// KillServer SIGKILLs node i's orch server (1-based; a cluster with
// Options.Servers) and returns when it is gone.
func (c *Cluster) KillServer(i int) time.Time {
	c.t.Helper()
	at := time.Now()
	if out, err := c.script("kill-server", "--name", c.ID, "--node", strconv.Itoa(i)); err != nil {
		c.t.Fatalf("testcluster.sh kill-server: %v\n%s", err, out)
	}
	return at
}

// ClientOf is an admin client of node i's server (1-based).
func (c *Cluster) ClientOf(i int) kubernetes.Interface {
	c.t.Helper()
	cfg, err := clientcmd.BuildConfigFromFlags("https://"+net.JoinHostPort(c.Nodes[i-1].IP, "6443"), c.Kubeconfig)
	if err != nil {
		c.t.Fatal(err)
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		c.t.Fatal(err)
	}
	return cs
}

// hostKubeconfig is where an `orch server` without --write-kubeconfig
// writes its admin kubeconfig; no test cluster may touch it.
const hostKubeconfig = "/etc/orch/orch.yaml"

func statHostKubeconfig() string {
	fi, err := os.Stat(hostKubeconfig)
	if err != nil {
		return "absent"
	}
	return fmt.Sprintf("%d bytes, modified %s", fi.Size(), fi.ModTime().UTC().Format(time.RFC3339Nano))
}
