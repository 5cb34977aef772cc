package proxy

import (
	"slices"
	"strings"
	"testing"

	"go.uber.org/zap/zaptest"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
)

func newTestSyncer(t *testing.T) (*syncer, *fakeBackend, *fakeConntrack) {
	be, ct := newFakeBackend(), &fakeConntrack{}
	cfg := Config{Prefix: "ORCH-", ClusterCIDR: "10.42.0.0/16", MasqMark: 0x4000}
	return newSyncer(zaptest.NewLogger(t), be, newGenerator(cfg, true), ct), be, ct
}

func ports(node string, pairs ...any) []*servicePort {
	var out []*servicePort
	for i := 0; i < len(pairs); i += 2 {
		out = append(out, servicePorts(pairs[i].(*corev1.Service), []*discoveryv1.EndpointSlice{pairs[i+1].(*discoveryv1.EndpointSlice)}, node)...)
	}
	return out
}

// assertKernel checks the fake kernel holds exactly the rendering of want.
func assertKernel(t *testing.T, s *syncer, be *fakeBackend, want []*servicePort) {
	t.Helper()
	r := s.gen.render(want)
	for _, table := range tableOrder {
		for _, c := range r.chains(table) {
			if !slices.Equal(be.tables[table][c], r[table][c]) {
				t.Errorf("%s/%s differs:\n got %q\nwant %q", table, c, be.tables[table][c], r[table][c])
			}
		}
		for c := range be.tables[table] {
			if _, ok := r[table][c]; !ok && s.gen.n.owned(table, c) {
				t.Errorf("stale chain %s/%s left", table, c)
			}
		}
	}
}

func TestSyncPartialWritesOnlyChanges(t *testing.T) {
	s, be, _ := newTestSyncer(t)
	a := testSvc("ns", "a", "10.43.0.10")
	b := testSvc("ns", "b", "10.43.0.11")
	v1 := ports("n", a, testSlice("ns", "a", "x", 80, ready("10.42.0.2", "10.42.0.3")...), b, testSlice("ns", "b", "x", 80, ready("10.42.0.4")...))
	st, err := s.sync(v1, false)
	if err != nil || !st.Full {
		t.Fatalf("first sync: %+v %v", st, err)
	}
	assertKernel(t, s, be, v1)
	if len(be.jumps) != len(s.gen.n.jumps()) || be.jumps[0].rule[len(be.jumps[0].rule)-1] != "ORCH-SERVICES" {
		t.Errorf("jumps: %v", be.jumps)
	}
	// A full resync finds the jumps in the saved tables: no go-iptables call.
	ensured := be.ensured
	if _, err := s.sync(v1, true); err != nil || be.ensured != ensured {
		t.Errorf("full resync ensured jumps again (%d -> %d, %v)", ensured, be.ensured, err)
	}
	// One endpoint of a replaced: SVC chain rewritten, new SEP written, old SEP deleted.
	v2 := ports("n", a, testSlice("ns", "a", "x", 80, ready("10.42.0.2", "10.42.0.9")...), b, testSlice("ns", "b", "x", 80, ready("10.42.0.4")...))
	st, err = s.sync(v2, false)
	if err != nil || st.Full || st.Written != 2 || st.Deleted != 1 {
		t.Fatalf("endpoint change: %+v %v", st, err)
	}
	last := string(be.restores[len(be.restores)-1])
	if strings.Contains(last, "*filter") || strings.Contains(last, ":ORCH-SERVICES") {
		t.Errorf("partial sync rewrote unchanged chains:\n%s", last)
	}
	assertKernel(t, s, be, v2)
	// Nothing changed: no restore at all.
	n := len(be.restores)
	if _, err := s.sync(v2, false); err != nil || len(be.restores) != n {
		t.Errorf("no-op sync ran iptables-restore (%v)", err)
	}
	// Service b deleted: its chains go in the same transaction as SERVICES.
	v3 := ports("n", a, testSlice("ns", "a", "x", 80, ready("10.42.0.2", "10.42.0.9")...))
	if _, err := s.sync(v3, false); err != nil {
		t.Fatal(err)
	}
	assertKernel(t, s, be, v3)
}

func TestSyncFullRemovesStaleAndKeepsForeign(t *testing.T) {
	s, be, _ := newTestSyncer(t)
	be.tables[tableNAT]["ORCH-SVC-AAAAAAAAAAAAAAAA"] = []string{"-A ORCH-SVC-AAAAAAAAAAAAAAAA -j ORCH-SEP-BBBBBBBBBBBBBBBB"}
	be.tables[tableNAT]["ORCH-SEP-BBBBBBBBBBBBBBBB"] = []string{}
	be.tables[tableNAT]["ORCH-POSTROUTING"] = []string{"-A ORCH-POSTROUTING -j MASQUERADE"}
	be.tables[tableNAT]["ORCH-SERVICES"] = []string{"-A ORCH-SERVICES -j ORCH-SVC-AAAAAAAAAAAAAAAA"}
	v := ports("n", testSvc("ns", "a", "10.43.0.10"), testSlice("ns", "a", "x", 80, ready("10.42.0.2")...))
	if _, err := s.sync(v, false); err != nil {
		t.Fatal(err)
	}
	assertKernel(t, s, be, v)
	if _, ok := be.tables[tableNAT]["ORCH-POSTROUTING"]; !ok {
		t.Error("the pod network's chain was deleted")
	}
}

func TestSyncFailureForcesFull(t *testing.T) {
	s, be, _ := newTestSyncer(t)
	v := ports("n", testSvc("ns", "a", "10.43.0.10"), testSlice("ns", "a", "x", 80, ready("10.42.0.2")...))
	if _, err := s.sync(v, false); err != nil {
		t.Fatal(err)
	}
	v2 := ports("n", testSvc("ns", "a", "10.43.0.10"), testSlice("ns", "a", "x", 80, ready("10.42.0.3")...))
	be.failNext = true
	if _, err := s.sync(v2, false); err == nil {
		t.Fatal("want an error")
	}
	st, err := s.sync(v2, false)
	if err != nil || !st.Full {
		t.Fatalf("after a failure: %+v %v", st, err)
	}
	assertKernel(t, s, be, v2)
}

func TestSyncFlushesStaleUDP(t *testing.T) {
	s, _, ct := newTestSyncer(t)
	udp := func(sv *corev1.Service) { sv.Spec.Ports[0].Protocol = corev1.ProtocolUDP }
	slice := func(eps ...testEP) *discoveryv1.EndpointSlice {
		sl := testSlice("ns", "dns", "x", 53, eps...)
		sl.Ports[0].Protocol = new(corev1.Protocol)
		*sl.Ports[0].Protocol = corev1.ProtocolUDP
		return sl
	}
	svc := testSvc("ns", "dns", "10.43.0.10", udp)
	for _, step := range []struct {
		eps  []testEP
		want []string
	}{
		{nil, nil},
		{ready("10.42.0.2", "10.42.0.3"), []string{"10.43.0.10:80<-"}}, // had none: flush the rejected flows
		{ready("10.42.0.3"), []string{"10.43.0.10:80<-10.42.0.2"}},
	} {
		ct.calls = nil
		if _, err := s.sync(ports("n", svc, slice(step.eps...)), false); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(ct.calls, step.want) {
			t.Errorf("conntrack deletions %q, want %q", ct.calls, step.want)
		}
	}
}

func TestCleanupRemovesOnlyOwned(t *testing.T) {
	s, be, _ := newTestSyncer(t)
	be.tables[tableNAT]["ORCH-POSTROUTING"] = []string{}
	v := ports("n", testSvc("ns", "a", "10.43.0.10"), testSlice("ns", "a", "x", 80, ready("10.42.0.2")...))
	if _, err := s.sync(v, false); err != nil {
		t.Fatal(err)
	}
	if err := cleanup(be, s.gen.n); err != nil {
		t.Fatal(err)
	}
	for _, table := range tableOrder {
		for c := range be.tables[table] {
			if s.gen.n.owned(table, c) {
				t.Errorf("left %s/%s", table, c)
			}
		}
	}
	if len(be.jumps) != 0 {
		t.Errorf("jumps left: %v", be.jumps)
	}
	if _, ok := be.tables[tableNAT]["ORCH-POSTROUTING"]; !ok {
		t.Error("foreign chain deleted")
	}
}
