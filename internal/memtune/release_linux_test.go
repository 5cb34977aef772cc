//go:build linux

package memtune

import (
	"os"
	"testing"

	"go.uber.org/zap/zaptest"
)

const sampleMaps = `00400000-02263000 r-xp 00000000 fe:01 1234 /usr/local/bin/orch
02263000-047bb000 r--p 01e63000 fe:01 1234 /usr/local/bin/orch
047bb000-0486f000 rw-p 043bb000 fe:01 1234 /usr/local/bin/orch
0486f000-068c3000 rw-p 00000000 00:00 0 
7f5627e00000-7f5667e00000 r--s 00000000 fe:01 99 /var/lib/orch/server/db/state.db
7f56aeb9a000-7f56aeb9c000 r-xp 00000000 00:00 0                          [vdso]
b6f9c000-b6f9d000 r-xp 00000000 fe:01 77 /opt/my orch/orch
garbage line
`

func TestReadOnlyOf(t *testing.T) {
	tests := []struct {
		path string
		want []mapping
	}{
		{"/usr/local/bin/orch", []mapping{
			{0x400000, 0x2263000, "r-xp", "/usr/local/bin/orch"},
			{0x2263000, 0x47bb000, "r--p", "/usr/local/bin/orch"},
		}},
		{"/opt/my orch/orch", []mapping{{0xb6f9c000, 0xb6f9d000, "r-xp", "/opt/my orch/orch"}}},
		{"/var/lib/orch/server/db/state.db", nil}, // shared mapping: never ours to page out
		{"/nowhere", nil},
	}
	ms := parseMaps([]byte(sampleMaps))
	if len(ms) != 6 { // the anonymous mapping (no path) and the garbage line are skipped
		t.Fatalf("parseMaps: %d mappings, want 6: %+v", len(ms), ms)
	}
	for _, tt := range tests {
		got := readOnlyOf(ms, tt.path)
		if len(got) != len(tt.want) {
			t.Fatalf("readOnlyOf(%q) = %+v, want %+v", tt.path, got, tt.want)
		}
		for i := range got {
			if got[i] != tt.want[i] {
				t.Errorf("readOnlyOf(%q)[%d] = %+v, want %+v", tt.path, i, got[i], tt.want[i])
			}
		}
	}
}

// Settle on the test binary itself: the process keeps running (its code is
// faulted back in) and the executable's read-only mappings were advised.
func TestSettleReleasesBinary(t *testing.T) {
	n, err := releaseBinary()
	if err != nil {
		t.Fatalf("releaseBinary: %v", err)
	}
	fi, err := os.Stat("/proc/self/exe")
	if err != nil {
		t.Fatal(err)
	}
	if n <= 0 || n > fi.Size()+1<<20 {
		t.Errorf("advised %d bytes of a %d-byte executable", n, fi.Size())
	}
	Settle(zaptest.NewLogger(t))
}
