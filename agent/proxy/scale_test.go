package proxy

import (
	"slices"
	"strings"
	"testing"
)

func TestSyncLargeClusterMode(t *testing.T) {
	s, be, _ := newTestSyncer(t)
	small, big := scalePorts(2, 10, 0), scalePorts(101, 10, 0) // 20 and 1,010 endpoints
	for i, step := range []struct {
		ports []*servicePort
		large bool
	}{{small, false}, {big, true}, {scalePorts(101, 10, 1), true}, {small, false}} {
		st, err := s.sync(step.ports, false)
		if err != nil || st.Large != step.large {
			t.Fatalf("step %d: %+v %v, want large %v", i, st, err, step.large)
		}
		assertKernel(t, s, be, step.ports)
		sep := s.gen.n.endpointChain(step.ports[1].name, "tcp", step.ports[1].endpoints[0].String())
		rules := be.tables[tableNAT][sep]
		if len(rules) != 2 || strings.Contains(rules[1], "--comment") != !step.large {
			t.Errorf("step %d: %s is %q (large %v)", i, sep, rules, step.large)
		}
	}
}

func TestSyncCacheHint(t *testing.T) {
	hinted := func(input []byte) []string {
		var out []string
		lines := strings.Split(string(input), "\n")
		for i, l := range lines {
			if l == "-S" {
				out = append(out, strings.TrimPrefix(lines[i-1], "*"))
			}
		}
		return out
	}
	for _, nft := range []bool{true, false} {
		s, be, _ := newTestSyncer(t)
		be.nft = nft
		// From scratch: empty tables, so listing them is free.
		st, err := s.sync(scalePorts(20, 10, 0), false)
		if err != nil {
			t.Fatal(err)
		}
		want := "filter,nat"
		if !nft {
			want = ""
		}
		if got := strings.Join(hinted(be.restores[len(be.restores)-1]), ","); got != want || strings.Join(st.Hinted, ",") != want {
			t.Errorf("nft %v: from scratch hinted %q (stats %q), want %q", nft, got, st.Hinted, want)
		}
		// One endpoint change into full tables: no hint.
		if st, err = s.sync(scalePorts(20, 10, 1), false); err != nil || st.Written != 2 {
			t.Fatalf("%+v %v", st, err)
		}
		if got := hinted(be.restores[len(be.restores)-1]); len(got) != 0 || len(st.Hinted) != 0 {
			t.Errorf("nft %v: one change hinted %q", nft, got)
		}
		assertKernel(t, s, be, scalePorts(20, 10, 1))
	}
}

func TestWantsHint(t *testing.T) {
	s := &syncer{foreign: map[string]int{tableNAT: 100}, hintRatio: hintRatio}
	for _, tc := range []struct {
		own           int // rules in the proxy's chains
		lines, chains int
		want          bool
	}{
		{1000, 43000, 11000, true},   // 1,000 x 10 into a small table
		{32000, 43000, 11000, false}, // rewriting 1,000 x 10: listing it costs as much
		{32000, 20, 3, false},        // one endpoint change
		{32000, 3300, 1100, false},   // 100 services added
	} {
		s.own = map[string]int{tableNAT: tc.own}
		if got := s.wantsHint(tableNAT, tc.lines, tc.chains); got != tc.want {
			t.Errorf("wantsHint(%d rules; %d lines, %d chains) = %v, want %v", tc.own, tc.lines, tc.chains, got, tc.want)
		}
	}
	if !s.wantsHint(tableFilter, 10, 2) {
		t.Error("an empty table should always be listed")
	}
}

// TestRealIPTablesLarge switches large cluster mode on and off on a real
// kernel (each backend, in a throwaway netns); on iptables-nft the sync
// from scratch goes through the cache hint.
func TestRealIPTablesLarge(t *testing.T) {
	requireRoot(t)
	for _, cmd := range backends(t) {
		t.Run(cmd, func(t *testing.T) {
			leave := enterNetns(t)
			defer leave()
			s, be := benchSyncer(t, cmd)
			defer func() {
				if err := cleanup(be, s.gen.n); err != nil {
					t.Errorf("cleanup: %v", err)
				}
			}()
			for i, step := range []struct {
				ports []*servicePort
				large bool
			}{{scalePorts(101, 10, 0), true}, {scalePorts(101, 10, 1), true}, {scalePorts(2, 10, 0), false}} {
				st, err := s.sync(step.ports, false)
				if err != nil || st.Large != step.large || (i == 0 && be.NFT() != (len(st.Hinted) == 2)) {
					t.Fatalf("step %d: %+v %v", i, st, err)
				}
				out := save(t, cmd)
				if n := strings.Count(out, "\n-A "); n != st.Rules+len(s.gen.n.jumps()) {
					t.Errorf("step %d: %d rules in %s-save, want %d", i, n, cmd, st.Rules+len(s.gen.n.jumps()))
				}
				for _, l := range strings.Split(out, "\n") {
					if strings.HasPrefix(l, "-A ORCH-SEP-") && strings.Contains(l, "--comment") == step.large {
						t.Fatalf("step %d (large %v): %s", i, step.large, l)
					}
				}
			}
		})
	}
}

func TestJumpsByRestore(t *testing.T) {
	s, be, _ := newTestSyncer(t)
	// A jump to ORCH-SERVICES in OUTPUT that does not read as expected:
	// go-iptables decides for that one; the rest go into one restore.
	be.tables[tableNAT]["ORCH-SERVICES"] = []string{}
	odd := jump{table: tableNAT, from: "OUTPUT", rule: []string{"-j", "ORCH-SERVICES"}}
	be.jumps = []jump{odd}
	if _, err := s.sync(scalePorts(1, 1, 0), false); err != nil {
		t.Fatal(err)
	}
	if be.ensured != 1 {
		t.Errorf("%d go-iptables jumps, want 1", be.ensured)
	}
	want := append(s.gen.n.jumps(), odd)
	for _, j := range want {
		n := 0
		for _, h := range be.jumps {
			if h.table == j.table && h.from == j.from && slices.Equal(h.rule, j.rule) {
				n++
			}
		}
		if n != 1 {
			t.Errorf("jump %s/%s is there %d times, want once", j.table, j.line(), n)
		}
	}
	in := string(be.restores[0])
	if !strings.Contains(in, `-I PREROUTING 1 -m comment --comment "orch service portals" -j ORCH-SERVICES`) ||
		strings.Contains(in[strings.Index(in, "*nat"):], ":ORCH-SERVICES") || !strings.Contains(in, ":ORCH-MARK-MASQ") {
		t.Errorf("jump restore:\n%s", in)
	}
}

func TestSyncHintOffAfterFailure(t *testing.T) {
	s, be, _ := newTestSyncer(t)
	be.nft, be.noList = true, true
	v := scalePorts(3, 2, 0)
	if _, err := s.sync(v, false); err == nil {
		t.Fatal("want an error")
	}
	st, err := s.sync(v, false)
	if err != nil || len(st.Hinted) != 0 || strings.Contains(string(be.restores[len(be.restores)-1]), "-S\n") {
		t.Fatalf("after a hinted failure: %+v %v", st, err)
	}
	assertKernel(t, s, be, v)
}
