package volumes

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

func TestHostPathTypes(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "dir")
	file := filepath.Join(root, "file")
	sock := filepath.Join(root, "sock")
	must(t, os.Mkdir(dir, 0o700))
	must(t, os.WriteFile(file, nil, 0o600))
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	block := findBlockDevice()
	cases := []struct {
		name, path string
		typ        corev1.HostPathType
		errSub     string // "" = success
	}{
		{"unset, missing ok", filepath.Join(root, "missing"), corev1.HostPathUnset, ""},
		{"dir", dir, corev1.HostPathDirectory, ""},
		{"dir missing", filepath.Join(root, "nodir"), corev1.HostPathDirectory, "hostPath type check failed, " + root + "/nodir is not a directory, unable to determine its type: path \"" + root + "/nodir\" does not exist"},
		{"dir is file", file, corev1.HostPathDirectory, "hostPath type check failed: " + file + " is not a directory, it's a File"},
		{"dir or create", filepath.Join(root, "a/b"), corev1.HostPathDirectoryOrCreate, ""},
		{"dir or create on file", file, corev1.HostPathDirectoryOrCreate, "is not a directory, it's a File"},
		{"file", file, corev1.HostPathFile, ""},
		{"file is dir", dir, corev1.HostPathFile, "hostPath type check failed: " + dir + " is not a file, it's a Directory"},
		{"file or create", filepath.Join(root, "newfile"), corev1.HostPathFileOrCreate, ""},
		{"file or create on dir", dir, corev1.HostPathFileOrCreate, "is not a file, it's a Directory"},
		{"socket", sock, corev1.HostPathSocket, ""},
		{"socket is file", file, corev1.HostPathSocket, "is not a socket file, it's a File"},
		{"chardev", "/dev/null", corev1.HostPathCharDev, ""},
		{"chardev is dir", dir, corev1.HostPathCharDev, "is not a character device, it's a Directory"},
		{"blockdev is chardev", "/dev/null", corev1.HostPathBlockDev, "/dev/null is not a block device, it's a CharDevice"},
		{"invalid type", dir, corev1.HostPathType("Weird"), "Weird is an invalid volume type"},
	}
	if block != "" {
		cases = append(cases, struct {
			name, path string
			typ        corev1.HostPathType
			errSub     string
		}{"blockdev", block, corev1.HostPathBlockDev, ""})
	}
	for _, tc := range cases {
		typ := tc.typ
		vol, err := setupHostPath(&corev1.HostPathVolumeSource{Path: tc.path, Type: &typ})
		if tc.errSub == "" {
			if err != nil || vol.HostPath != tc.path || vol.ReadOnly {
				t.Errorf("%s: got %+v, %v", tc.name, vol, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tc.errSub) {
			t.Errorf("%s: err = %v, want containing %q", tc.name, err, tc.errSub)
		}
	}
	if m := fileModeOf(t, filepath.Join(root, "a/b")); m != 0o755 {
		t.Errorf("DirectoryOrCreate mode %o, want 755", m)
	}
	if m := fileModeOf(t, filepath.Join(root, "newfile")); m != 0o644 {
		t.Errorf("FileOrCreate mode %o, want 644", m)
	}
}

func findBlockDevice() string {
	entries, _ := os.ReadDir("/dev")
	for _, e := range entries {
		p := filepath.Join("/dev", e.Name())
		if st, err := os.Stat(p); err == nil && st.Mode()&os.ModeDevice != 0 && st.Mode()&os.ModeCharDevice == 0 {
			return p
		}
	}
	return ""
}
