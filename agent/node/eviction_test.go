package node

import (
	"strings"
	"testing"
)

func TestParseThresholds(t *testing.T) {
	got, err := ParseThresholds("memory.available<200Mi, nodefs.available<5%,imagefs.available<0%,pid.available<0")
	if err != nil {
		t.Fatal(err)
	}
	want := DefaultThresholds
	want.MemoryAvailable, want.NodeFSAvailable, want.ImageFSAvailable, want.PIDAvailable = 200<<20, 0.05, 0, 0
	if got != want {
		t.Errorf("got %+v, want %+v", got, want)
	}
	if got, err := ParseThresholds(""); err != nil || got != DefaultThresholds {
		t.Errorf("empty: %+v %v", got, err)
	}
	for spec, msg := range map[string]string{
		"nodefs.available=10%":   "want <signal><<value>",
		"disk.available<10%":     "unknown signal",
		"nodefs.available<10Gi":  "percentage",
		"nodefs.available<120%":  "percentage",
		"memory.available<lots":  "quantity",
		"memory.available<-10Mi": "quantity",
	} {
		if _, err := ParseThresholds(spec); err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("%s: error %v, want one saying %q", spec, err, msg)
		}
	}
}

func TestThresholdsOff(t *testing.T) {
	off, _ := ParseThresholds("nodefs.available<0%,imagefs.available<0%")
	full := FSStats{Avail: 1, Total: 100, InodesFree: 50, Inodes: 100}
	if _, disk, _ := off.Pressure(Sample{MemAvailable: -1, NodeFS: full, ImageFS: full}); disk {
		t.Error("disk pressure with the filesystem signals off")
	}
	if _, disk, _ := DefaultThresholds.Pressure(Sample{MemAvailable: -1, NodeFS: full, ImageFS: full}); !disk {
		t.Error("no disk pressure at 1% free with the defaults")
	}
}
