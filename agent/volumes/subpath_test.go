package volumes

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

func TestMountSource(t *testing.T) {
	root := t.TempDir()
	vol := filepath.Join(root, "vol")
	outside := filepath.Join(root, "outside")
	for _, d := range []string{filepath.Join(vol, "data"), outside} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	must(t, os.WriteFile(filepath.Join(vol, "data", "f"), []byte("x"), 0o644))
	must(t, os.Symlink("data/f", filepath.Join(vol, "inlink")))
	must(t, os.Symlink(outside, filepath.Join(vol, "escape")))
	must(t, os.Symlink("../outside", filepath.Join(vol, "escape2")))
	cases := []struct {
		name    string
		ro      bool
		subPath string
		want    string
		wantErr error
		anyErr  bool
	}{
		{name: "no subPath", want: vol},
		{name: "dir", subPath: "data", want: filepath.Join(vol, "data")},
		{name: "file", subPath: "data/f", want: filepath.Join(vol, "data", "f")},
		{name: "symlink inside resolved", subPath: "inlink", want: filepath.Join(vol, "data", "f")},
		{name: "created", subPath: "new/deep", want: filepath.Join(vol, "new", "deep")},
		{name: "absolute", subPath: "/etc", anyErr: true},
		{name: "dotdot", subPath: "data/../../outside", anyErr: true},
		{name: "symlink escape", subPath: "escape", wantErr: ErrSubPathEscapes},
		{name: "relative symlink escape", subPath: "escape2", wantErr: ErrSubPathEscapes},
		{name: "create through escaping link", subPath: "escape/x", wantErr: ErrSubPathEscapes},
		{name: "read-only missing", ro: true, subPath: "missing", anyErr: true},
	}
	for _, tc := range cases {
		got, err := MountSource(Volume{HostPath: vol, ReadOnly: tc.ro}, corev1.VolumeMount{Name: "v", SubPath: tc.subPath})
		switch {
		case tc.wantErr != nil && !errors.Is(err, tc.wantErr):
			t.Errorf("%s: err = %v, want %v", tc.name, err, tc.wantErr)
		case tc.anyErr && err == nil:
			t.Errorf("%s: want error, got %q", tc.name, got)
		case tc.wantErr == nil && !tc.anyErr && (err != nil || got != tc.want):
			t.Errorf("%s: got %q, %v; want %q", tc.name, got, err, tc.want)
		}
	}
	if _, err := os.Stat(filepath.Join(outside, "x")); err == nil {
		t.Error("a directory was created outside the volume")
	}
	if m := fileModeOf(t, filepath.Join(vol, "new", "deep")); m != fileModeOf(t, vol) {
		t.Errorf("created subPath mode %o, want volume's %o", m, fileModeOf(t, vol))
	}
}

func TestContainerMounts(t *testing.T) {
	root := t.TempDir()
	vols := map[string]Volume{"data": {HostPath: root}, "cfg": {HostPath: root, ReadOnly: true}}
	c := &corev1.Container{Name: "c", VolumeMounts: []corev1.VolumeMount{
		{Name: "data", MountPath: "/data"},
		{Name: "data", MountPath: "/logs", SubPathExpr: "logs/$(POD)"},
		{Name: "cfg", MountPath: "/cfg"},
		{Name: "data", MountPath: "/ro", ReadOnly: true},
	}}
	got, err := ContainerMounts(vols, c, []string{"POD=p1"})
	if err != nil {
		t.Fatal(err)
	}
	want := []Mount{{root, "/data", false}, {filepath.Join(root, "logs", "p1"), "/logs", false}, {root, "/cfg", true}, {root, "/ro", true}}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("mount %d = %+v, want %+v", i, got[i], want[i])
		}
	}
	c.VolumeMounts = []corev1.VolumeMount{{Name: "nope", MountPath: "/x"}}
	if _, err := ContainerMounts(vols, c, nil); err == nil {
		t.Error("want error for unknown volume")
	}
	c.VolumeMounts = []corev1.VolumeMount{{Name: "data", MountPath: "/x", SubPathExpr: "$(MISSING)"}}
	if _, err := ContainerMounts(vols, c, nil); err == nil {
		t.Error("want error for undefined subPathExpr variable")
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
