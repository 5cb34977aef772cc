package images

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/containerd/containerd/v2/pkg/namespaces"
	"go.uber.org/zap/zaptest"
	corev1 "k8s.io/api/core/v1"
)

const ns = "orcht"

func TestImportDirIdempotent(t *testing.T) {
	c, base := startContainerd(t)
	dir := filepath.Join(base, "images")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	buildTar(t, dir, "docker.io/library/busybox:1.36", "docker.io/library/nginx:1.25")
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("ignored"), 0o644); err != nil {
		t.Fatal(err)
	}
	state := filepath.Join(base, "import-state.json")
	s := New(zaptest.NewLogger(t), c, Options{Namespace: ns, Snapshotter: "overlayfs", StateFile: state})
	ctx := context.Background()
	got, err := s.ImportDir(ctx, dir)
	want := []string{"docker.io/library/busybox:1.36", "docker.io/library/nginx:1.25"}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("first import: %v, %v", got, err)
	}
	if got, err := s.ImportDir(ctx, dir); err != nil || len(got) != 0 {
		t.Fatalf("second import: %v, %v", got, err)
	}
	// A restarted agent (new Service, same state file) skips it too, and so
	// does a copy of the same file under another name.
	data, _ := os.ReadFile(filepath.Join(dir, "docker.io_library_busybox_1.36.tar"))
	if err := os.WriteFile(filepath.Join(dir, "copy.tar"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	s2 := New(zaptest.NewLogger(t), c, Options{Namespace: ns, Snapshotter: "overlayfs", StateFile: state})
	if got, err := s2.ImportDir(ctx, dir); err != nil || len(got) != 0 {
		t.Fatalf("import after restart: %v, %v", got, err)
	}
	img, err := s2.EnsureImage(ctx, "nginx:1.25", corev1.PullNever, nil)
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := img.IsUnpacked(namespaces.WithNamespace(ctx, ns), "overlayfs"); !ok || err != nil {
		t.Fatalf("imported image not unpacked: %v %v", ok, err)
	}
	// A broken tarball is reported and does not block the others.
	if err := os.WriteFile(filepath.Join(dir, "broken.tar"), []byte("not a tar"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := s2.ImportDir(ctx, dir); err == nil || !strings.Contains(err.Error(), "broken.tar") {
		t.Fatalf("broken tar: %v", err)
	}
	cleanupImages(t, s2, want...)
}

func cleanupImages(t *testing.T, s *Service, refs ...string) {
	t.Helper()
	for _, r := range refs {
		if err := s.Remove(context.Background(), r); err != nil {
			t.Error(err)
		}
	}
}

func TestWatchImportsNewFiles(t *testing.T) {
	c, base := startContainerd(t)
	dir := filepath.Join(base, "watched")
	s := New(zaptest.NewLogger(t), c, Options{Namespace: ns, StateFile: filepath.Join(base, "state.json")})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Watch(ctx, dir) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	}()
	time.Sleep(200 * time.Millisecond) // the dir exists and is watched
	tmp := t.TempDir()
	src := buildTar(t, tmp, "docker.io/library/late:1.0")
	if err := os.Rename(src, filepath.Join(dir, "late.tar")); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		if _, err := s.EnsureImage(ctx, "late:1.0", corev1.PullNever, nil); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("image dropped into the watched dir was not imported")
		}
		time.Sleep(100 * time.Millisecond)
	}
	cleanupImages(t, s, "late:1.0")
}

func TestEnsureImagePolicies(t *testing.T) {
	c, base := startContainerd(t)
	ctx := context.Background()
	src := buildTar(t, t.TempDir(), "docker.io/library/served:1.0")
	open := newRegistry(t, src, "", "")
	locked := newRegistry(t, src, "alice", "s3cret")
	regs, err := ParseRegistries([]byte(`
mirrors:
  "` + open.host() + `":
    endpoint: ["http://` + open.host() + `"]
  "` + locked.host() + `":
    endpoint: ["http://` + locked.host() + `"]
`))
	if err != nil {
		t.Fatal(err)
	}
	s := New(zaptest.NewLogger(t), c, Options{Namespace: ns, Registries: regs, StateFile: filepath.Join(base, "s.json")})
	openRef := open.host() + "/library/served:1.0"
	lockedRef := locked.host() + "/library/served:1.0"
	defer cleanupImages(t, s, openRef, lockedRef)

	if _, err := s.EnsureImage(ctx, openRef, corev1.PullNever, nil); !errors.Is(err, ErrImageNeverPull) {
		t.Fatalf("Never, absent: %v", err)
	}
	img, err := s.EnsureImage(ctx, openRef, corev1.PullIfNotPresent, nil)
	if err != nil {
		t.Fatalf("IfNotPresent, absent (pull over plain http): %v", err)
	}
	if ok, _ := img.IsUnpacked(namespaces.WithNamespace(ctx, ns), "overlayfs"); !ok {
		t.Fatal("pulled image not unpacked")
	}
	open.srv.Close() // now only the local copy can satisfy requests
	if _, err := s.EnsureImage(ctx, openRef, corev1.PullIfNotPresent, nil); err != nil {
		t.Fatalf("IfNotPresent, present: %v", err)
	}
	if _, err := s.EnsureImage(ctx, openRef, corev1.PullNever, nil); err != nil {
		t.Fatalf("Never, present: %v", err)
	}
	_, err = s.EnsureImage(ctx, openRef, corev1.PullAlways, nil)
	var pe *PullError
	if !errors.Is(err, ErrImagePull) || !errors.As(err, &pe) {
		t.Fatalf("Always, registry down: %v", err)
	}
	t.Logf("registry down: %v", err)

	if _, err := s.EnsureImage(ctx, lockedRef, corev1.PullAlways, nil); !errors.Is(err, ErrImagePull) {
		t.Fatalf("no credentials: %v", err)
	} else {
		t.Logf("no credentials: %v", err)
	}
	if _, err := s.EnsureImage(ctx, lockedRef, corev1.PullAlways, &Auth{Username: "alice", Password: "s3cret"}); err != nil {
		t.Fatalf("pull secret: %v", err)
	}
	if _, err := s.EnsureImage(ctx, "bad name@@", corev1.PullAlways, nil); !errors.Is(err, ErrInvalidImageName) {
		t.Fatalf("invalid name: %v", err)
	}
}
