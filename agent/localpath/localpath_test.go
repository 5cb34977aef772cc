package localpath

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/orch/orch/server/auth"
)

func TestIsVolumePath(t *testing.T) {
	tests := []struct {
		path string
		want bool
	}{
		{"/var/lib/orch/storage/pvc-1_ns_data", true},
		{"/var/lib/orch/storage/pvc-1_ns_data/", true},
		{"/var/lib/orch/storage", false},
		{"/var/lib/orch/storage/", false},
		{"/var/lib/orch/storage/a/b", false},
		{"/var/lib/orch/storage/../etc", false},
		{"/etc", false},
		{"storage/pvc-1", false},
		{"", false},
	}
	for _, tt := range tests {
		if got := IsVolumePath("/var/lib/orch/storage", tt.path); got != tt.want {
			t.Errorf("IsVolumePath(%q) = %v want %v", tt.path, got, tt.want)
		}
	}
	if got := VolumePath("/d", "pvc-1", "ns", "data"); got != "/d/pvc-1_ns_data" {
		t.Errorf("VolumePath = %q", got)
	}
}

func deletedPV(name, node, path string, policy corev1.PersistentVolumeReclaimPolicy) *corev1.PersistentVolume {
	now := metav1.Now()
	return &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{NodeLabel: node},
		Finalizers: []string{"other/keep", Finalizer}, DeletionTimestamp: &now},
		Spec: corev1.PersistentVolumeSpec{PersistentVolumeReclaimPolicy: policy,
			PersistentVolumeSource: corev1.PersistentVolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: path}}}}
}

// TestRun: the node gets the storage dir annotation; a deleted Delete
// volume loses its data and finalizer; Retain keeps the data; a path
// outside the storage dir and another node's volume are never touched.
func TestRun(t *testing.T) {
	dir := t.TempDir()
	storage := StorageDir(filepath.Join(dir, "data"))
	outside := filepath.Join(dir, "outside")
	gone, kept := VolumePath(storage, "pvc-del", "ns", "a"), VolumePath(storage, "pvc-ret", "ns", "b")
	other := VolumePath(storage, "pvc-other", "ns", "c")
	for _, d := range []string{gone, kept, outside, other} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	client := fake.NewSimpleClientset(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1"}},
		deletedPV("pvc-del", "n1", gone, corev1.PersistentVolumeReclaimDelete),
		deletedPV("pvc-ret", "n1", kept, corev1.PersistentVolumeReclaimRetain),
		deletedPV("evil", "n1", outside, corev1.PersistentVolumeReclaimDelete),
		deletedPV("pvc-other", "n2", other, corev1.PersistentVolumeReclaimDelete))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- Run(ctx, Config{Client: client, NodeName: "n1", StorageDir: storage, Logger: zaptest.NewLogger(t)})
	}()
	t.Cleanup(func() { cancel(); <-done })

	waitFor(t, "finalizers of n1's volumes removed", func() bool {
		for _, n := range []string{"pvc-del", "pvc-ret", "evil"} {
			if slices.Contains(finalizers(t, client, n), Finalizer) {
				return false
			}
		}
		return true
	})
	node, err := client.CoreV1().Nodes().Get(ctx, "n1", metav1.GetOptions{})
	if err != nil || node.Annotations[NodeDirAnnotation] != storage {
		t.Fatalf("node annotation: %v %v", node.Annotations, err)
	}
	if info, err := os.Stat(storage); err != nil || info.Mode().Perm() != 0o700 {
		t.Errorf("storage dir: %v %v", info, err)
	}
	if _, err := os.Stat(gone); !os.IsNotExist(err) {
		t.Errorf("Delete volume's data still there: %v", err)
	}
	for _, d := range []string{kept, outside, other} {
		if _, err := os.Stat(d); err != nil {
			t.Errorf("%s removed: %v", d, err)
		}
	}
	if f := finalizers(t, client, "pvc-del"); !slices.Equal(f, []string{"other/keep"}) {
		t.Errorf("other finalizers must stay: %v", f)
	}
	if !slices.Contains(finalizers(t, client, "pvc-other"), Finalizer) {
		t.Error("another node's volume was touched")
	}
	// A re-registered Node (annotations lost) gets the annotation again.
	node.Annotations = nil
	if _, err := client.CoreV1().Nodes().Update(ctx, node, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "annotation restored", func() bool {
		n, err := client.CoreV1().Nodes().Get(ctx, "n1", metav1.GetOptions{})
		return err == nil && n.Annotations[NodeDirAnnotation] == storage
	})
}

func finalizers(t *testing.T, c kubernetes.Interface, name string) []string {
	t.Helper()
	pv, err := c.CoreV1().PersistentVolumes().Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return pv.Finalizers
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestNodeLabelMatchesAuthorizer(t *testing.T) {
	if NodeLabel != auth.VolumeNodeLabel {
		t.Fatalf("the node authorizer checks %q, the provisioner sets %q", auth.VolumeNodeLabel, NodeLabel)
	}
}
