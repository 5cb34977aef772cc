package volumes

import (
	"context"
	"errors"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// twinImages mounts a tmpfs in place of an image and counts the calls.
type twinImages struct {
	mounts   int
	released []types.UID
	err      error
}

func (f *twinImages) MountImage(_ context.Context, _ *corev1.Pod, src *corev1.ImageVolumeSource, _, target string) error {
	if f.err != nil {
		return f.err
	}
	f.mounts++
	return ensureTmpfs(target, 0, 0o755)
}

func (f *twinImages) ReleaseImages(_ context.Context, uid types.UID) error {
	f.released = append(f.released, uid)
	return nil
}

// TestHostImageVolume: an image volume is mounted once and read-only for
// the containers, later syncs leave it alone, teardown releases it; without
// Config.Images it is unsupported.
func TestHostImageVolume(t *testing.T) {
	requireRoot(t)
	ctx := context.Background()
	vol := corev1.Volume{Name: "img", VolumeSource: corev1.VolumeSource{Image: &corev1.ImageVolumeSource{Reference: "kitten:1.0"}}}
	if _, err := newTestManager(t, Config{}).SetupPod(ctx, testPod("u0", vol), nil); !errors.Is(err, ErrUnsupported) {
		t.Fatalf("no Config.Images: %v", err)
	}
	twin := &twinImages{}
	m := newTestManager(t, Config{Images: twin})
	pod := testPod("u1", vol)
	for i := 0; i < 2; i++ {
		got, err := m.SetupPod(ctx, pod, nil)
		if err != nil {
			t.Fatal(err)
		}
		if v := got["img"]; !v.ReadOnly || v.HostPath != m.volumeDir("u1", imagePlugin, "img") {
			t.Fatalf("volume %+v", v)
		}
	}
	if twin.mounts != 1 {
		t.Fatalf("mounted %d times, want once", twin.mounts)
	}
	if err := m.TeardownPod(ctx, "u1"); err != nil {
		t.Fatal(err)
	}
	if len(twin.released) != 1 || twin.released[0] != "u1" {
		t.Fatalf("released %v", twin.released)
	}
	twin.err = errors.New("pull failed")
	if _, err := m.SetupPod(ctx, testPod("u2", vol), nil); !errors.Is(err, twin.err) {
		t.Fatalf("failed mount: %v", err)
	}
}
