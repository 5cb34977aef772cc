package snapshots

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestFileNameAndValidateName(t *testing.T) {
	if got := FileName("on-demand", "node1", time.Unix(1700000000, 0)); got != "on-demand-node1-1700000000" {
		t.Fatalf("FileName = %q", got)
	}
	for _, bad := range []string{"", "../x", "a/b", ".hidden", "-x", "a b", strings.Repeat("a", 201)} {
		if ValidateName(bad) == nil {
			t.Errorf("ValidateName(%q) accepted", bad)
		}
	}
	for _, good := range []string{"on-demand", "etcd-snapshot", "before_upgrade.1"} {
		if err := ValidateName(good); err != nil {
			t.Errorf("ValidateName(%q): %v", good, err)
		}
	}
}

// TestSaveListPruneDelete saves snapshots under two prefixes, prunes one
// prefix to a retention and deletes by name; other files are left alone.
func TestSaveListPruneDelete(t *testing.T) {
	ctx := context.Background()
	s, _ := testStore(t, 3)
	dir := filepath.Join(t.TempDir(), "snaps")
	var saved []Info
	for i := 0; i < 4; i++ {
		info, err := Save(ctx, s, dir, "auto", "n1")
		if err != nil {
			t.Fatal(err)
		}
		saved = append(saved, info)
		time.Sleep(1100 * time.Millisecond) // names carry the unix second
	}
	other, err := Save(ctx, s, dir, "manual", "n1")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	if saved[0].Revision != 3 || saved[0].Node != "n1" || saved[0].Size == 0 ||
		saved[0].Location != "file://"+filepath.Join(dir, saved[0].Name) {
		t.Fatalf("info %+v", saved[0])
	}
	list, err := List(dir)
	if err != nil || len(list) != 5 || list[0].Name != saved[0].Name || list[4].Name != other.Name {
		t.Fatalf("List = %+v, %v", list, err)
	}
	pruned, err := Prune(dir, "auto", 2)
	if err != nil || len(pruned) != 2 || pruned[0] != saved[0].Name || pruned[1] != saved[1].Name {
		t.Fatalf("Prune = %v, %v", pruned, err)
	}
	if _, err := Prune(dir, "auto", 0); err == nil {
		t.Fatal("Prune with retention 0 accepted")
	}
	deleted, err := Delete(dir, []string{other.Name, "notes.txt", "missing", "../x"})
	if len(deleted) != 1 || err == nil {
		t.Fatalf("Delete = %v, %v; want only %s deleted and errors for the rest", deleted, err, other.Name)
	}
	list, _ = List(dir)
	if len(list) != 2 || list[0].Name != saved[2].Name || list[1].Name != saved[3].Name {
		t.Fatalf("left %+v", list)
	}
	if _, err := os.Stat(filepath.Join(dir, "notes.txt")); err != nil {
		t.Fatalf("a file that is not a snapshot was touched: %v", err)
	}
	if l, err := List(filepath.Join(dir, "none")); err != nil || len(l) != 0 {
		t.Fatalf("List of a missing dir = %v, %v", l, err)
	}
}
