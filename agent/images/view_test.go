package images

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/containerd/containerd/v2/pkg/namespaces"
	"github.com/containerd/errdefs"
	"go.uber.org/zap/zaptest"
	"golang.org/x/sys/unix"
	corev1 "k8s.io/api/core/v1"

	testimages "github.com/orch/orch/test/images"
)

// TestMountView mounts an image read-only through a snapshot view on a real
// containerd, reuses the view, and removes it after the unmount.
func TestMountView(t *testing.T) {
	c, base := startContainerd(t)
	ctx := context.Background()
	ref := "docker.io/library/kitten:1.0"
	tarball := filepath.Join(base, "kitten.tar")
	err := testimages.WriteImage(tarball, []testimages.File{
		{Name: "data.json", Mode: 0o644, Data: []byte(`{"image":"kitten.jpg"}`)},
		{Name: "etc/os-release", Mode: 0o644, Data: []byte("NAME=test\n")}}, testimages.Config{}, ref)
	if err != nil {
		t.Fatal(err)
	}
	s := New(zaptest.NewLogger(t), c, Options{Namespace: ns})
	if _, err := s.ImportFile(ctx, tarball); err != nil {
		t.Fatal(err)
	}
	defer cleanupImages(t, s, ref)
	img, err := s.EnsureImage(ctx, ref, corev1.PullNever, nil)
	if err != nil {
		t.Fatal(err)
	}
	key := ViewKey("uid-1", "vol")
	target := filepath.Join(base, "mnt")
	for i := 0; i < 2; i++ { // the second round reuses the view
		if err := os.MkdirAll(target, 0o750); err != nil {
			t.Fatal(err)
		}
		if err := s.MountView(ctx, img, key, "uid-1", target); err != nil {
			t.Fatal(err)
		}
		if b, err := os.ReadFile(filepath.Join(target, "data.json")); err != nil || string(b) != `{"image":"kitten.jpg"}` {
			t.Fatalf("data.json: %q %v", b, err)
		}
		if err := os.WriteFile(filepath.Join(target, "new"), nil, 0o644); !errors.Is(err, unix.EROFS) {
			t.Fatalf("write into the view: %v, want EROFS", err)
		}
		if err := unix.Unmount(target, 0); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.RemoveViews(ctx, "uid-1"); err != nil {
		t.Fatal(err)
	}
	sn := c.SnapshotService("overlayfs")
	if _, err := sn.Stat(namespaces.WithNamespace(ctx, ns), key); !errdefs.IsNotFound(err) {
		t.Fatalf("view after RemoveViews: %v", err)
	}
	if err := s.RemoveViews(ctx, "uid-1"); err != nil {
		t.Fatalf("second RemoveViews: %v", err)
	}
}
