package reliability

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/orch/orch/test/testutil"
)

func TestMain(m *testing.M) { testutil.Main(m) }

// settings come from the environment (see doc.go).
type settings struct {
	sizes  []int
	rounds int
	only   map[string]bool // ORCH_RELIABILITY_FAULTS; empty: all
	agents bool            // ORCH_RELIABILITY_AGENTS (default 1): an agent on every node
}

func readSettings(t *testing.T) settings {
	s := settings{sizes: []int{3, 5}, rounds: 10, only: map[string]bool{}, agents: os.Getenv("ORCH_RELIABILITY_AGENTS") != "0"}
	if v := os.Getenv("ORCH_RELIABILITY_SERVERS"); v != "" {
		s.sizes = nil
		for _, f := range strings.Split(v, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil || n < 1 || n > 9 {
				t.Fatalf("ORCH_RELIABILITY_SERVERS=%q: want a list of 1..9", v)
			}
			s.sizes = append(s.sizes, n)
		}
	}
	if v := os.Getenv("ORCH_RELIABILITY_ROUNDS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			t.Fatalf("ORCH_RELIABILITY_ROUNDS=%q: want a positive number", v)
		}
		s.rounds = n
	}
	for _, f := range strings.Split(os.Getenv("ORCH_RELIABILITY_FAULTS"), ",") {
		if f = strings.TrimSpace(f); f != "" {
			s.only[f] = true
		}
	}
	return s
}

func requireHost(t *testing.T) {
	if os.Getenv("ORCH_RELIABILITY") != "1" {
		t.Skip("skipping: the fault-injection runs take long; set ORCH_RELIABILITY=1 (make reliability)")
	}
	if os.Geteuid() != 0 {
		t.Skip("skipping: needs root (network namespaces, iptables)")
	}
	for _, bin := range []string{"ip", "iptables", "nsenter", "setsid", "strace"} {
		if _, err := exec.LookPath(bin); err != nil {
			t.Fatalf("%s is not in PATH (apt-get install iproute2 iptables util-linux strace)", bin)
		}
	}
}

// TestFaults runs, for each cluster size, every fault that applies to it
// for the configured rounds under load, and prints the results table.
func TestFaults(t *testing.T) {
	requireHost(t)
	s := readSettings(t)
	for _, n := range s.sizes {
		t.Run(fmt.Sprintf("servers=%d", n), func(t *testing.T) {
			c := startServers(t, n, s.agents)
			createNamespace(t, c)
			kubectl := testutil.Kubectl(t)
			var nodes *nodeWatch
			if s.agents {
				nodes = startNodeWatch(c)
			}
			var rows []string
			var sts []*stats
			for _, f := range faults() {
				if n < f.minimum || len(s.only) > 0 && !s.only[f.name] {
					continue
				}
				st := &stats{}
				for i := 0; i < s.rounds && !t.Failed(); i++ {
					r := &round{t: t, c: c, name: fmt.Sprintf("%s-%d", f.name, i), rec: &recorder{start: time.Now()}, nodes: nodes}
					r.kubectl = &kubectlProbe{r: r, bin: kubectl, kcfg: c.kubeconfig}
					for k := 0; k < keysPerRound; k++ {
						r.keys = append(r.keys, fmt.Sprintf("%s-r%d-k%02d", f.name, i, k))
					}
					r.run(f, st)
					t.Logf("%s round %d: %d ops so far, outage %v", f.name, i, st.ops, lastOutage(st))
				}
				st.name = f.name
				sts = append(sts, st)
			}
			var gaps map[string]time.Duration
			if nodes != nil {
				gaps = nodes.check(t)
			}
			for _, st := range sts {
				rows = append(rows, row(n, st, s.agents, gaps[st.name]))
			}
			report(t, n, rows)
		})
	}
}

func lastOutage(st *stats) time.Duration {
	if len(st.outages) == 0 {
		return 0
	}
	return st.outages[len(st.outages)-1]
}

func createNamespace(t *testing.T, c *servers) {
	cs := c.client(1, 5*time.Second)
	deadline := time.Now().Add(2 * time.Minute)
	for {
		_, err := cs.CoreV1().Namespaces().Create(context.Background(),
			&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}}, metav1.CreateOptions{})
		if err == nil || apierrors.IsAlreadyExists(err) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("create namespace %s: %v", namespace, err)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

const tableHead = "| servers | agents | fault | rounds | ops | ok | 409/404 | unknown | watch events | resumes / re-lists | violations | lost writes | watch gaps | writes again after fault p50 / p99 | kubectl ok / failed | longest node Lease gap |\n" +
	"|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"

func row(n int, st *stats, agents bool, leaseGap time.Duration) string {
	a := "no"
	if agents {
		a = strconv.Itoa(n)
	}
	return fmt.Sprintf("| %d | %s | %s | %d | %d | %d | %d | %d | %d | %d / %d | %d | %d | %d | %s / %s | %d / %d | %s |",
		n, a, st.name, st.rounds, st.ops, st.ok, st.failed, st.unknown, st.events, st.reconnects, st.relists,
		st.violations+st.inconclusive, st.lost, st.watchErrs,
		percentile(st.outages, 50).Round(time.Millisecond), percentile(st.outages, 99).Round(time.Millisecond),
		st.kubectlOK, st.kubectlFailed, fmtGap(leaseGap))
}

// report prints the markdown table and appends it to
// $ORCH_RELIABILITY_REPORT when set.
func report(t *testing.T, n int, rows []string) {
	table := tableHead + "\n" + strings.Join(rows, "\n") + "\n"
	t.Logf("results, %d servers:\n%s", n, table)
	if p := os.Getenv("ORCH_RELIABILITY_REPORT"); p != "" {
		f, err := os.OpenFile(p, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		_, _ = fmt.Fprintf(f, "%s\n", table)
	}
}
