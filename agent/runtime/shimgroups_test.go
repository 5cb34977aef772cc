package runtime

import "testing"

// TestShimGroups: pods fill the fullest group with room, every container
// of a pod goes where its pod is, and a pod leaves with its last container.
func TestShimGroups(t *testing.T) {
	g := newShimGroups(2)
	steps := []struct {
		op, pod, ctr, want string
	}{
		{"assign", "a", "a1", "a"},
		{"assign", "a", "a2", "a"}, // a pod's second container: its pod's group
		{"assign", "b", "b1", "a"}, // room in a's group
		{"assign", "c", "c1", "c"}, // a's group is full
		{"assign", "d", "d1", "c"},
		{"assign", "e", "e1", "e"},
		{"release", "", "a1", ""},
		{"assign", "f", "f1", "e"}, // a still has a2: its group is full; e's has room
		{"release", "", "a2", ""},  // a leaves: a's group has b only
		{"assign", "g", "g1", "a"},
		{"release", "", "nope", ""}, // unknown containers are ignored
	}
	for i, s := range steps {
		if s.op == "release" {
			g.release(s.ctr)
			continue
		}
		if got := g.assign(s.pod, s.ctr); got != s.want {
			t.Fatalf("step %d: %s of pod %s went to group %q, want %q", i, s.ctr, s.pod, got, s.want)
		}
	}
	want, members := map[string]int{"a": 2, "c": 2, "e": 2}, g.members()
	if len(members) != len(want) {
		t.Fatalf("groups %v, want %v", members, want)
	}
	for name, n := range want {
		if members[name] != n {
			t.Fatalf("groups %v, want %v", members, want)
		}
	}
	for _, c := range []string{"b1", "c1", "d1", "e1", "f1", "g1"} {
		g.release(c)
	}
	if len(g.members()) != 0 || len(g.pods) != 0 || len(g.ctrs) != 0 {
		t.Fatalf("after releasing everything: %v %v %v", g.members(), g.pods, g.ctrs)
	}
}

// TestShimGroupsRestore: containers found at start keep their groups and
// count towards their size; with size 1 every pod is its own group.
func TestShimGroupsRestore(t *testing.T) {
	g := newShimGroups(3)
	g.restore("a", "a1", "x")
	g.restore("b", "b1", "x")
	g.restore("b", "b2", "x")
	if got := g.assign("c", "c1"); got != "x" {
		t.Fatalf("c went to %q, want x (two pods of three)", got)
	}
	if got := g.assign("d", "d1"); got != "d" {
		t.Fatalf("d went to %q, want a new group d", got)
	}
	one := newShimGroups(1)
	one.assign("a", "a1")
	if got := one.assign("b", "b1"); got != "b" {
		t.Fatalf("size 1: b went to %q", got)
	}
	// A pod that comes back with its UID (a static pod) while the group
	// named after it lives on, full, gets a group of its own.
	h := newShimGroups(2)
	h.assign("s", "s1")
	h.assign("t", "t1")
	h.release("s1")
	h.assign("u", "u1") // group s: t, u
	if got := h.assign("s", "s2"); got != "s-1" {
		t.Fatalf("s came back to %q, want s-1 (group s lives on without it)", got)
	}
}
