package main

import (
	"strings"
	"testing"
)

func TestParseOrchTargets(t *testing.T) {
	got, err := parseOrchTargets("orch, orch-ha3,orch-ha3-leader")
	if err != nil {
		t.Fatal(err)
	}
	want := []orchTarget{{name: "orch", servers: 1}, {name: "orch-ha3", servers: 3}, {name: "orch-ha3-leader", servers: 3, leaderOnly: true}}
	if len(got) != len(want) {
		t.Fatalf("got %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("target %d = %+v, want %+v", i, got[i], want[i])
		}
	}
	if s := got[1].setup(); !strings.Contains(s, "round-robin") {
		t.Fatalf("setup of orch-ha3 = %q", s)
	}
	if s := got[2].setup(); !strings.Contains(s, "leader") {
		t.Fatalf("setup of orch-ha3-leader = %q", s)
	}
	if got[0].setup() != "" {
		t.Fatalf("a single server has a setup note: %q", got[0].setup())
	}
}

func TestParseOrchTargetsRejects(t *testing.T) {
	for _, in := range []string{"", "baseline", "orch-ha", "orch-ha1", "orch-ha10", "orch-ha03", "orch-ha3-follower", "orch,orch"} {
		if _, err := parseOrchTargets(in); err == nil {
			t.Errorf("parseOrchTargets(%q) = nil error", in)
		}
	}
}
