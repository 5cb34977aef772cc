package cgroups

import (
	"errors"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

func TestPaths(t *testing.T) {
	m := &Manager{cfg: Config{Root: "orch"}}
	tests := []struct{ got, want string }{
		{m.KubepodsPath(), "/orch/kubepods"},
		{m.TierPath(corev1.PodQOSGuaranteed), "/orch/kubepods"},
		{m.TierPath(corev1.PodQOSBurstable), "/orch/kubepods/burstable"},
		{m.TierPath(corev1.PodQOSBestEffort), "/orch/kubepods/besteffort"},
		{m.PodPath(corev1.PodQOSGuaranteed, "u1"), "/orch/kubepods/podu1"},
		{m.PodPath(corev1.PodQOSBurstable, "u2"), "/orch/kubepods/burstable/podu2"},
		{ContainerCgroupsPath("/orch/kubepods/burstable/podu2", "abc"), "/orch/kubepods/burstable/podu2/abc"},
		{ContainerCgroupsPath("orch/kubepods/podu1", "abc"), "/orch/kubepods/podu1/abc"},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("got %q, want %q", tt.got, tt.want)
		}
	}
}

func TestUIDFromDir(t *testing.T) {
	tests := []struct {
		name string
		uid  types.UID
		ok   bool
	}{
		{"pod1234-ab", "1234-ab", true}, {"pod", "", false}, {"burstable", "", false}, {"besteffort", "", false},
	}
	for _, tt := range tests {
		uid, ok := uidFromDir(tt.name)
		if uid != tt.uid || ok != tt.ok {
			t.Errorf("uidFromDir(%q) = %q %v", tt.name, uid, ok)
		}
	}
}

func TestConfig(t *testing.T) {
	tests := []struct {
		root, want string
		err        bool
	}{
		{"", "orch", false}, {"orch", "orch", false}, {"/orcht-1/", "orcht-1", false}, {"a/b", "a/b", false},
		{"..", "", true}, {"../x", "", true}, {"/", "", true},
	}
	for _, tt := range tests {
		c, err := Config{Root: tt.root}.withDefaults()
		if tt.err {
			if !errors.Is(err, ErrConfig) {
				t.Errorf("root %q: err = %v, want ErrConfig", tt.root, err)
			}
			continue
		}
		if err != nil || c.Root != tt.want || c.Mountpoint != DefaultMountpoint || c.RemoveTimeout != DefaultRemoveTimeout {
			t.Errorf("root %q: %+v %v", tt.root, c, err)
		}
	}
	if _, err := (Config{Version: 3}).withDefaults(); !errors.Is(err, ErrConfig) {
		t.Errorf("version 3: %v", err)
	}
}
