package kubelet

import (
	"os"
	"path/filepath"
	"testing"
)

func TestNextRestartCountFromLogs(t *testing.T) {
	for _, tc := range []struct {
		files []string
		want  int
	}{
		{nil, 0},
		{[]string{"0.log"}, 1},
		{[]string{"0.log", "1.log", "1.log.20260101-000000", "3.log.1", "x.log", "7"}, 4},
	} {
		dir := t.TempDir()
		for _, f := range tc.files {
			if err := os.WriteFile(filepath.Join(dir, f), nil, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if got := nextRestartCountFromLogs(dir); got != tc.want {
			t.Errorf("%v: %d, want %d", tc.files, got, tc.want)
		}
	}
	if got := nextRestartCountFromLogs(filepath.Join(t.TempDir(), "missing")); got != 0 {
		t.Errorf("missing dir: %d", got)
	}
}
