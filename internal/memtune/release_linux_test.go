//go:build linux

package memtune

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

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

// TestReleaseProcessPagesOutAChild pages out a copy of sleep(1) that only
// the child maps: its file pages must leave its RSS.
func TestReleaseProcessPagesOutAChild(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("process_madvise on another process needs CAP_SYS_NICE")
	}
	src, err := exec.LookPath("sleep")
	if err != nil {
		t.Skip("no sleep(1)")
	}
	bin := filepath.Join(t.TempDir(), "sleep-copy")
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, data, 0o755); err != nil {
		t.Fatal(err)
	}
	// Written back, so its pages are clean (dirty ones are not paged out).
	if err := exec.Command("sync", bin).Run(); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "60")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	time.Sleep(200 * time.Millisecond) // exec done, its text mapped
	before := exeRSS(t, cmd.Process.Pid, bin)
	n, err := ReleaseProcess(cmd.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	if n <= 0 {
		t.Fatalf("advised %d bytes", n)
	}
	// The page it sleeps in may come straight back.
	if after := exeRSS(t, cmd.Process.Pid, bin); before < 8 || after > before/2 {
		t.Errorf("the child's binary pages: %d KiB before, %d KiB after", before, after)
	}
	if _, err := ReleaseProcess(1 << 30); err == nil {
		t.Error("no error for a process that does not exist")
	}
}

// exeRSS sums Rss of pid's read-only mappings of bin, in KiB.
func exeRSS(t *testing.T, pid int, bin string) int {
	t.Helper()
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/smaps", pid))
	if err != nil {
		t.Fatal(err)
	}
	total, cur := 0, false
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		switch {
		case len(f) >= 6 && strings.Contains(f[0], "-"):
			cur = strings.Join(f[5:], " ") == bin && f[1][1] == '-'
		case cur && len(f) >= 2 && f[0] == "Rss:":
			kib, _ := strconv.Atoi(f[1])
			total += kib
		}
	}
	return total
}
