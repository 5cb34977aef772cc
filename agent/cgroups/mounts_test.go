package cgroups

import (
	"slices"
	"testing"
)

const hybridMountinfo = `31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755
32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu
35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory
40 31 0:37 / /sys/fs/cgroup/systemd rw,relatime - cgroup cgroup rw,name=systemd
41 31 0:38 / /sys/fs/cgroup/unified rw,relatime shared:9 - cgroup2 cgroup2 rw
`

func TestParseMounts(t *testing.T) {
	tests := []struct {
		name, info, fstype string
		want               []string
	}{
		{"hybrid v1", hybridMountinfo, "cgroup", []string{"/sys/fs/cgroup/cpu", "/sys/fs/cgroup/memory", "/sys/fs/cgroup/systemd"}},
		{"hybrid unified", hybridMountinfo, "cgroup2", []string{"/sys/fs/cgroup/unified"}},
		{"unified host", "30 23 0:26 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw,nsdelegate\n", "cgroup", nil},
		{"legacy no cgroup2", "32 31 0:29 / /sys/fs/cgroup/cpu rw - cgroup cgroup rw,cpu\n", "cgroup2", nil},
		{"garbage", "no separator here\n\n", "cgroup", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := parseMounts(tt.info, tt.fstype); !slices.Equal(got, tt.want) {
				t.Errorf("parseMounts(%s) = %v, want %v", tt.fstype, got, tt.want)
			}
		})
	}
}
