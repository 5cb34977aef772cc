package proxy

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
)

// lockedBackend lets the test read the fake kernel while the proxier runs.
type lockedBackend struct {
	mu sync.Mutex
	*fakeBackend
}

func (l *lockedBackend) Restore(in []byte) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.fakeBackend.Restore(in)
}

func (l *lockedBackend) state() (restores int, nat string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	var b strings.Builder
	for _, rs := range l.tables[tableNAT] {
		for _, r := range rs {
			b.WriteString(r + "\n")
		}
	}
	return len(l.restores), b.String()
}

// TestProxierFollowsAPIAndCoalesces runs the proxier on a fake clientset:
// rules follow Services and EndpointSlices, and a burst of 30 changes is
// applied in a few syncs, not 30.
func TestProxierFollowsAPIAndCoalesces(t *testing.T) {
	cs := fake.NewClientset()
	be := &lockedBackend{fakeBackend: newFakeBackend()}
	cfg := Config{NodeName: "n", Prefix: "ORCH-", ClusterCIDR: "10.42.0.0/16", MinSyncPeriod: 200 * time.Millisecond}.withDefaults()
	p, err := newProxier(zaptest.NewLogger(t), cs, cfg, be, &fakeConntrack{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- p.Run(ctx) }()
	defer func() { cancel(); <-done }()

	if _, err := cs.CoreV1().Services("ns").Create(ctx, testSvc("ns", "web", "10.43.0.20"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.DiscoveryV1().EndpointSlices("ns").Create(ctx, testSlice("ns", "web", "a", 8080, ready("10.42.0.5")...), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitNAT(t, be, "--to-destination 10.42.0.5:8080")
	before, _ := be.state()
	for i := range 30 {
		sl := testSlice("ns", "web", "a", 8080, ready(fmt.Sprintf("10.42.1.%d", i))...)
		if _, err := cs.DiscoveryV1().EndpointSlices("ns").Update(ctx, sl, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	waitNAT(t, be, "--to-destination 10.42.1.29:8080")
	if after, _ := be.state(); after-before > 10 {
		t.Errorf("30 changes took %d syncs, want them coalesced", after-before)
	}
	if err := cs.CoreV1().Services("ns").Delete(ctx, "web", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitNAT(t, be, "!ns/web")
}

// waitNAT waits for a nat rule containing want ("!x": no rule contains x).
func waitNAT(t *testing.T, be *lockedBackend, want string) {
	t.Helper()
	for end := time.Now().Add(10 * time.Second); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
		_, nat := be.state()
		if neg, ok := strings.CutPrefix(want, "!"); ok && !strings.Contains(nat, neg) || !ok && strings.Contains(nat, want) {
			return
		}
	}
	_, nat := be.state()
	t.Fatalf("no nat state with %q:\n%s", want, nat)
}
