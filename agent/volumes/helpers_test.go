package volumes

import (
	"os"
	"path/filepath"
	"sort"
	"testing"

	"go.uber.org/zap/zaptest"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// requireRoot skips host tests when not root.
func requireRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("host test: needs root (mounts tmpfs)")
	}
}

// newTestManager returns a Manager over a temp PodsDir whose mounts are
// all unmounted before the dir is removed, even if the test fails.
func newTestManager(t *testing.T, cfg Config) *Manager {
	t.Helper()
	dir := t.TempDir()
	t.Cleanup(func() {
		if err := unmountAll(dir); err != nil {
			t.Errorf("cleanup: %v", err)
		}
	})
	cfg.PodsDir = filepath.Join(dir, "pods")
	return New(zaptest.NewLogger(t), cfg)
}

func testPod(uid string, vols ...corev1.Volume) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p-" + uid, UID: types.UID(uid),
			Labels: map[string]string{"app": "web"}},
		Spec: corev1.PodSpec{Volumes: vols, Containers: []corev1.Container{{Name: "c"}}},
	}
}

// listTree lists the relative paths under dir, sorted.
func listTree(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.Walk(dir, func(p string, _ os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if rel != "." {
			out = append(out, rel)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("walk %s: %v", dir, err)
	}
	sort.Strings(out)
	return out
}

func readFile(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatalf("read %s: %v", p, err)
	}
	return string(b)
}

func fileModeOf(t *testing.T, p string) os.FileMode {
	t.Helper()
	st, err := os.Stat(p)
	if err != nil {
		t.Fatalf("stat %s: %v", p, err)
	}
	return st.Mode().Perm()
}
