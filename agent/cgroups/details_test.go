package cgroups

import (
	"os"
	"path/filepath"
	"testing"
)

func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestDetailsV1(t *testing.T) {
	mem, cpu := filepath.Join(t.TempDir(), "memory"), filepath.Join(t.TempDir(), "cpu")
	writeFiles(t, mem, map[string]string{"memory.stat": "rss 10\ntotal_rss 4096\n", "memory.limit_in_bytes": "134217728\n"})
	writeFiles(t, cpu, map[string]string{"cpu.cfs_quota_us": "50000\n", "cpu.cfs_period_us": "100000\n", "cpu.shares": "512\n"})
	d, err := detailsV1(mem, cpu)
	if err != nil {
		t.Fatal(err)
	}
	want := Details{MemoryRSS: 4096, MemoryLimit: 128 << 20, CPUQuota: 50000, CPUPeriod: 100000, CPUShares: 512}
	if d != want {
		t.Fatalf("got %+v, want %+v", d, want)
	}
	writeFiles(t, mem, map[string]string{"memory.limit_in_bytes": "9223372036854771712\n"})
	writeFiles(t, cpu, map[string]string{"cpu.cfs_quota_us": "-1\n"})
	if d, _ = detailsV1(mem, cpu); d.MemoryLimit != 0 || d.CPUQuota != 0 {
		t.Fatalf("unlimited: got %+v", d)
	}
}

func TestDetailsV2(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"memory.stat": "anon 8192\nfile 5\n", "memory.max": "268435456\n",
		"cpu.max": "25000 100000\n", "cpu.weight": "20\n"})
	d, err := detailsV2(dir)
	if err != nil {
		t.Fatal(err)
	}
	// weight 20 is what runc makes of 512 shares
	want := Details{MemoryRSS: 8192, MemoryLimit: 256 << 20, CPUQuota: 25000, CPUPeriod: 100000, CPUShares: 2 + 19*262142/9999}
	if d != want {
		t.Fatalf("got %+v, want %+v", d, want)
	}
	writeFiles(t, dir, map[string]string{"memory.max": "max\n", "cpu.max": "max 100000\n"})
	if d, _ = detailsV2(dir); d.MemoryLimit != 0 || d.CPUQuota != 0 || d.CPUPeriod != 100000 {
		t.Fatalf("unlimited: got %+v", d)
	}
}
