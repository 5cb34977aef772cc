package reliability

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/orch/orch/test/cluster"
	"github.com/orch/orch/test/testutil"
)

// servers is a cluster of S `orch server`s in network namespaces, made and
// faulted through scripts/testcluster.sh.
type servers struct {
	t          testing.TB
	id         string
	n          int
	ips        []string // index i-1: server i
	logs       []string
	base       *rest.Config // the admin kubeconfig
	kubeconfig string       // its path

	mu   sync.Mutex
	dead map[int]bool // killed and not restarted
}

// leaderLines are the log lines a server writes when it gains and loses
// the Raft leadership (server/leader.go).
const (
	leaderOn  = "leader: running control loops"
	leaderOff = "not leader: control loops stopped"
)

// startServers starts n servers, each on its own node; with agents every
// node runs an `orch agent` too, and startServers waits for n Ready nodes.
func startServers(t testing.TB, n int, agents bool) *servers {
	t.Helper()
	b := make([]byte, 3)
	_, _ = rand.Read(b)
	c := &servers{t: t, id: "r" + hex.EncodeToString(b)[:5], n: n, dead: map[int]bool{}}
	t.Cleanup(func() {
		if t.Failed() {
			c.dumpLogs()
		}
		if out, err := c.script("down"); err != nil {
			t.Errorf("testcluster.sh down: %v\n%s", err, out)
		}
	})
	args := []string{"up", "--nodes", strconv.Itoa(n), "--servers", strconv.Itoa(n), "--binary", testutil.Binary(t)}
	if !agents {
		args = append(args, "--no-agents")
	}
	out, err := c.script(args...)
	if err != nil {
		t.Fatalf("testcluster.sh up: %v\n%s", err, out)
	}
	vars := map[string]string{}
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), "="); ok {
			vars[k] = v
		}
	}
	for i := 1; i <= n; i++ {
		c.ips = append(c.ips, vars[fmt.Sprintf("SERVER_%d_IP", i)])
		c.logs = append(c.logs, vars[fmt.Sprintf("SERVER_%d_LOG", i)])
	}
	c.kubeconfig = vars["KUBECONFIG"]
	if c.base, err = clientcmd.BuildConfigFromFlags("", c.kubeconfig); err != nil {
		t.Fatalf("loading %s: %v", vars["KUBECONFIG"], err)
	}
	for i := 1; i <= n; i++ {
		c.waitServing(i, 2*time.Minute)
	}
	if agents {
		c.waitNodesReady(2 * time.Minute)
	}
	return c
}

// waitNodesReady waits until all n nodes are Ready.
func (c *servers) waitNodesReady(timeout time.Duration) {
	c.t.Helper()
	cs := c.client(1, 5*time.Second)
	deadline := time.Now().Add(timeout)
	for {
		ready := 0
		if l, err := cs.CoreV1().Nodes().List(context.Background(), metav1.ListOptions{}); err == nil {
			for _, nd := range l.Items {
				for _, cond := range nd.Status.Conditions {
					if cond.Type == corev1.NodeReady && cond.Status == corev1.ConditionTrue {
						ready++
					}
				}
			}
		}
		if ready == c.n {
			return
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("%d of %d nodes Ready after %v", ready, c.n, timeout)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

func (c *servers) script(args ...string) (string, error) {
	s, err := cluster.Script()
	if err != nil {
		return "", err
	}
	full := append([]string{s, args[0], "--name", c.id}, args[1:]...)
	c.t.Logf("%s scripts/testcluster.sh %s", time.Now().UTC().Format("15:04:05.000"), strings.Join(full[1:], " "))
	out, err := exec.Command("bash", full...).Output()
	if ee, ok := err.(*exec.ExitError); ok {
		out = append(out, ee.Stderr...)
	}
	return string(out), err
}

func (c *servers) must(args ...string) {
	c.t.Helper()
	if out, err := c.script(args...); err != nil {
		c.t.Fatalf("testcluster.sh %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// config returns a client config bound to server i (1-based).
func (c *servers) config(i int, timeout time.Duration) *rest.Config {
	cfg := rest.CopyConfig(c.base)
	cfg.Host = "https://" + c.ips[i-1] + ":6443"
	cfg.QPS, cfg.Burst = 5000, 5000
	cfg.Timeout = timeout
	return cfg
}

func (c *servers) client(i int, timeout time.Duration) kubernetes.Interface {
	cs, err := kubernetes.NewForConfig(c.config(i, timeout))
	if err != nil {
		c.t.Fatal(err)
	}
	return cs
}

// waitServing waits until server i answers a quorum read.
func (c *servers) waitServing(i int, timeout time.Duration) {
	c.t.Helper()
	cs := c.client(i, 3*time.Second)
	deadline := time.Now().Add(timeout)
	for {
		_, err := cs.CoreV1().Namespaces().Get(context.Background(), "default", metav1.GetOptions{})
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("server %d does not serve after %v: %v", i, timeout, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func (c *servers) alive(i int) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return !c.dead[i]
}

// kill SIGKILLs server i and returns when the signal was sent.
func (c *servers) kill(i int) time.Time {
	c.t.Helper()
	out, err := c.script("kill-server", "--node", strconv.Itoa(i))
	if err != nil {
		c.t.Fatalf("testcluster.sh kill-server: %v\n%s", err, out)
	}
	c.mu.Lock()
	c.dead[i] = true
	c.mu.Unlock()
	for _, l := range strings.Split(out, "\n") {
		if v, ok := strings.CutPrefix(l, "KILLED_AT="); ok {
			if ns, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64); err == nil {
				return time.Unix(0, ns)
			}
		}
	}
	return time.Now() // already dead
}

func (c *servers) start(i int) {
	c.must("start-server", "--node", strconv.Itoa(i))
	c.mu.Lock()
	delete(c.dead, i)
	c.mu.Unlock()
}

// killAll SIGKILLs every server at once and returns when the last signal
// went out (from then on no server is left to accept a write).
func (c *servers) killAll() time.Time {
	at := make([]time.Time, c.n)
	var wg sync.WaitGroup
	for i := 1; i <= c.n; i++ {
		wg.Add(1)
		go func() { defer wg.Done(); at[i-1] = c.kill(i) }()
	}
	wg.Wait()
	last := at[0]
	for _, t := range at {
		if t.After(last) {
			last = t
		}
	}
	return last
}

// restartDead starts every killed server, in parallel.
func (c *servers) restartDead() {
	var wg sync.WaitGroup
	for i := 1; i <= c.n; i++ {
		if !c.alive(i) {
			wg.Add(1)
			go func() { defer wg.Done(); c.start(i) }()
		}
	}
	wg.Wait()
}

// partition cuts node i off from the nodes in from.
func (c *servers) partition(i int, from []int) {
	s := make([]string, len(from))
	for k, j := range from {
		s[k] = strconv.Itoa(j)
	}
	c.must("partition", "--node", strconv.Itoa(i), "--from", strings.Join(s, ","))
}

// leader waits until exactly one live server says it leads (its log's last
// leadership line), and returns it.
func (c *servers) leader(timeout time.Duration) int {
	c.t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		var leaders []int
		for i := 1; i <= c.n; i++ {
			if c.alive(i) && c.logsLeader(i) {
				leaders = append(leaders, i)
			}
		}
		if len(leaders) == 1 {
			return leaders[0]
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("no single leader after %v (servers that say they lead: %v)", timeout, leaders)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func (c *servers) logsLeader(i int) bool {
	b, err := os.ReadFile(c.logs[i-1])
	if err != nil {
		return false
	}
	s := string(b)
	return strings.LastIndex(s, leaderOn) > strings.LastIndex(s, leaderOff)
}

func (c *servers) others(i int) []int {
	var o []int
	for j := 1; j <= c.n; j++ {
		if j != i {
			o = append(o, j)
		}
	}
	return o
}

func (c *servers) dumpLogs() {
	for _, l := range c.logs {
		b, _ := os.ReadFile(l)
		if len(b) > 8000 {
			b = b[len(b)-8000:]
		}
		c.t.Logf("--- %s (tail) ---\n%s", filepath.Base(l), b)
	}
}
