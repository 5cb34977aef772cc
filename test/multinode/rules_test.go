package multinode

import (
	"context"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// svcChainRE matches the proxy's per-service chains (default prefix ORCH-).
var svcChainRE = regexp.MustCompile(`ORCH-(SVC|SVL|EXT|FW|SEP)-[A-Z0-9]+`)

// svcDeleteService: every node's nat table has web's chains (found by the
// rules commented with its port name "<ns>/web:http"); after the Service is
// deleted, none of them, nor any rule naming it in nat or filter, is left
// on any node.
func svcDeleteService(t *testing.T, e *svcEnv) {
	tag := svcNS + "/web:http"
	before := make([][]string, len(e.c.Nodes))
	for i := range e.c.Nodes {
		nat, err := e.c.InNode(i+1, "iptables-save", "-t", "nat")
		if err != nil {
			t.Fatalf("iptables-save on node %d: %v\n%s", i+1, err, nat)
		}
		before[i] = svcServiceChains(nat, tag)
		if !strings.Contains(strings.Join(before[i], " "), "ORCH-SVC-") {
			t.Fatalf("node %d has no ORCH-SVC- chain for %s before the delete:\n%s", i+1, tag, nat)
		}
		t.Logf("node %d: %s chains %v", i+1, tag, before[i])
	}
	if err := e.c.Client.CoreV1().Services(svcNS).Delete(context.Background(), "web", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	for i := range e.c.Nodes {
		var left []string
		svcPoll(t, 30*time.Second, fmt.Sprintf("node %d to drop %s's rules", i+1, tag), func() bool {
			left = nil
			for _, table := range []string{"nat", "filter"} {
				out, err := e.c.InNode(i+1, "iptables-save", "-t", table)
				if err != nil {
					left = append(left, fmt.Sprintf("iptables-save -t %s: %v", table, err))
					continue
				}
				for _, l := range strings.Split(out, "\n") {
					if strings.Contains(l, tag) || svcMentionsAny(l, before[i]) {
						left = append(left, table+": "+l)
					}
				}
			}
			return len(left) == 0
		}, func() string { return strings.Join(left, "\n") })
	}
	url := "http://" + e.webSvc.Spec.ClusterIP + "/"
	for _, cl := range e.clients {
		if got := svcReach(t, e, cl, []string{url}); len(got) > 0 {
			t.Errorf("%s still reaches the deleted Service at %s", cl, url)
		}
	}
}

// svcServiceChains lists the per-service chains on the rules carrying tag.
func svcServiceChains(save, tag string) []string {
	set := map[string]bool{}
	for _, l := range strings.Split(save, "\n") {
		if strings.Contains(l, tag) {
			for _, c := range svcChainRE.FindAllString(l, -1) {
				set[c] = true
			}
		}
	}
	out := make([]string, 0, len(set))
	for c := range set {
		out = append(out, c)
	}
	sort.Strings(out)
	return out
}

func svcMentionsAny(line string, chains []string) bool {
	for _, c := range svcChainRE.FindAllString(line, -1) {
		for _, want := range chains {
			if c == want {
				return true
			}
		}
	}
	return false
}
