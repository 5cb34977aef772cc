package overlay

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
)

// TestOverlayFollowsNodes runs the whole loop against a fake clientset in
// a throwaway netns: the node publishes its MAC, peers joining, changing
// and leaving are programmed and removed.
func TestOverlayFollowsNodes(t *testing.T) {
	ns, h := testNetns(t)
	ctx := context.Background()
	cs := fake.NewSimpleClientset(testNode("self", "10.42.0.0/24", "192.0.2.10", ""),
		testNode("b", "10.42.1.0/24", "192.0.2.11", "02:00:00:00:00:0b"))
	p, err := Config{NodeName: "self", NodeIP: net.ParseIP("192.0.2.10"), PodCIDR: "10.42.0.0/24",
		Client: cs, Log: zaptest.NewLogger(t)}.parse()
	if err != nil {
		t.Fatal(err)
	}
	o := newWithHandle(p, h)
	if err := o.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer o.Stop()
	state := func() string {
		return ipOut(t, ns, "route", "show", "proto", "111") + "\n" + ipOut(t, ns, "neigh", "show", "dev", DefaultDevice)
	}
	waitState := func(what string, ok func(s string) bool) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for s := state(); !ok(s); s = state() {
			if time.Now().After(deadline) {
				t.Fatalf("timed out waiting for %s; state:\n%s", what, s)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	waitState("the route to b", func(s string) bool {
		return strings.Contains(s, "10.42.1.0/24 via 10.42.1.0 dev orch.1 onlink") && strings.Contains(s, "02:00:00:00:00:0b")
	})
	self, err := cs.CoreV1().Nodes().Get(ctx, "self", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	link, err := h.LinkByName(DefaultDevice)
	if err != nil {
		t.Fatal(err)
	}
	if self.Annotations[AnnotationVXLANMAC] != link.Attrs().HardwareAddr.String() || self.Annotations[AnnotationBackend] != BackendVXLAN {
		t.Errorf("self annotations = %v, want MAC %s", self.Annotations, link.Attrs().HardwareAddr)
	}
	// c joins without a MAC (not programmable yet), then publishes one.
	c := testNode("c", "10.42.2.0/24", "192.0.2.12", "")
	if _, err := cs.CoreV1().Nodes().Create(ctx, c, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	c.Annotations[AnnotationVXLANMAC] = "02:00:00:00:00:0c"
	if _, err := cs.CoreV1().Nodes().Update(ctx, c, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitState("the route to c", func(s string) bool {
		return strings.Contains(s, "10.42.2.0/24 via 10.42.2.0") && strings.Contains(s, "02:00:00:00:00:0c")
	})
	if err := cs.CoreV1().Nodes().Delete(ctx, "b", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitState("b's route and neighbour to go", func(s string) bool {
		return !strings.Contains(s, "10.42.1.0") && strings.Contains(s, "10.42.2.0/24")
	})
	if fdb := ipOut(t, ns, "fdb", "show", "dev", DefaultDevice); strings.Contains(fdb, "192.0.2.11") {
		t.Errorf("b's FDB entry left:\n%s", fdb)
	}
}
