package volumes

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/orch/orch/agent/localpath"
)

// memClaims is an in-memory ClaimSource.
type memClaims struct {
	pvcs map[string]*corev1.PersistentVolumeClaim
	pvs  map[string]*corev1.PersistentVolume
}

var _ ClaimSource = memClaims{}

func (m memClaims) PersistentVolumeClaim(_ context.Context, ns, name string) (*corev1.PersistentVolumeClaim, error) {
	if c, ok := m.pvcs[ns+"/"+name]; ok {
		return c, nil
	}
	return nil, apierrors.NewNotFound(schema.GroupResource{Resource: "persistentvolumeclaims"}, name)
}

func (m memClaims) PersistentVolume(_ context.Context, name string) (*corev1.PersistentVolume, error) {
	if v, ok := m.pvs[name]; ok {
		return v, nil
	}
	return nil, apierrors.NewNotFound(schema.GroupResource{Resource: "persistentvolumes"}, name)
}

func (m memClaims) bind(claim string, pv *corev1.PersistentVolume) {
	pvc := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: claim, UID: types.UID("uid-" + claim)}}
	if pv != nil {
		pvc.Spec.VolumeName, pvc.Status.Phase = pv.Name, corev1.ClaimBound
		pv.Spec.ClaimRef = &corev1.ObjectReference{Namespace: "ns", Name: claim, UID: pvc.UID}
		m.pvs[pv.Name] = pv
	}
	m.pvcs["ns/"+claim] = pvc
}

func claimVol(name, claim string, ro bool) corev1.Volume {
	return corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{
		PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: claim, ReadOnly: ro}}}
}

func TestClaimVolumes(t *testing.T) {
	dir := t.TempDir()
	storage := filepath.Join(dir, "storage")
	claims := memClaims{pvcs: map[string]*corev1.PersistentVolumeClaim{}, pvs: map[string]*corev1.PersistentVolume{}}
	m := newTestManager(t, Config{Claims: claims, StorageDir: storage})

	lpPath := localpath.VolumePath(storage, "pvc-1", "ns", "data")
	claims.bind("data", &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: "pvc-1",
		Annotations: map[string]string{localpath.ProvisionedByAnnotation: localpath.ProvisionerName}},
		Spec: corev1.PersistentVolumeSpec{PersistentVolumeSource: corev1.PersistentVolumeSource{HostPath: &corev1.HostPathVolumeSource{
			Path: lpPath, Type: ptr.To(corev1.HostPathDirectoryOrCreate)}}}})
	hpPath := filepath.Join(dir, "static", "dir")
	claims.bind("static", &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: "static"},
		Spec: corev1.PersistentVolumeSpec{PersistentVolumeSource: corev1.PersistentVolumeSource{HostPath: &corev1.HostPathVolumeSource{
			Path: hpPath, Type: ptr.To(corev1.HostPathDirectoryOrCreate)}}}})

	pod := testPod("uid-claims", claimVol("a", "data", false), claimVol("b", "static", true))
	vols, err := m.SetupPod(context.Background(), pod, hostSources())
	if err != nil {
		t.Fatal(err)
	}
	if vols["a"] != (Volume{HostPath: lpPath}) || vols["b"] != (Volume{HostPath: hpPath, ReadOnly: true}) {
		t.Fatalf("volumes: %+v", vols)
	}
	for p, want := range map[string]os.FileMode{lpPath: 0o777, storage: 0o700} {
		if info, err := os.Stat(p); err != nil || info.Mode().Perm() != want {
			t.Errorf("%s: %v mode %v want %v", p, err, info.Mode().Perm(), want)
		}
	}
	if info, err := os.Stat(hpPath); err != nil || !info.IsDir() {
		t.Errorf("static hostPath not created: %v", err)
	}
	if err := os.WriteFile(filepath.Join(lpPath, "f"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	teardownAndCheck(t, m, pod.UID)
	if _, err := os.Stat(filepath.Join(lpPath, "f")); err != nil {
		t.Fatalf("teardown touched the volume's data: %v", err)
	}
}

func TestClaimVolumeErrors(t *testing.T) {
	dir := t.TempDir()
	claims := memClaims{pvcs: map[string]*corev1.PersistentVolumeClaim{}, pvs: map[string]*corev1.PersistentVolume{}}
	m := newTestManager(t, Config{Claims: claims, StorageDir: filepath.Join(dir, "storage"), NodeName: "n1"})
	claims.bind("pending", nil)
	claims.bind("local", &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: "local"},
		Spec: corev1.PersistentVolumeSpec{PersistentVolumeSource: corev1.PersistentVolumeSource{Local: &corev1.LocalVolumeSource{
			Path: filepath.Join(dir, "missing")}}}})
	claims.bind("nfs", &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: "nfs"},
		Spec: corev1.PersistentVolumeSpec{PersistentVolumeSource: corev1.PersistentVolumeSource{NFS: &corev1.NFSVolumeSource{Server: "s", Path: "/"}}}})
	claims.bind("stolen", &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: "stolen"}})
	claims.pvs["stolen"].Spec.ClaimRef.UID = "someone-else"
	claims.bind("elsewhere", &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: "elsewhere", Labels: map[string]string{localpath.NodeLabel: "n2"}},
		Spec: corev1.PersistentVolumeSpec{PersistentVolumeSource: corev1.PersistentVolumeSource{HostPath: &corev1.HostPathVolumeSource{
			Path: filepath.Join(dir, "storage", "elsewhere")}}}})
	tests := []struct {
		claim    string
		is       error
		notFound bool
		msg      string
	}{
		{"pending", ErrClaimNotBound, false, `persistentvolumeclaim "pending" is Pending`},
		{"missing", nil, true, `persistentvolumeclaim "missing"`},
		{"local", nil, false, "does not exist"},
		{"nfs", ErrUnsupported, false, "persistent volume source nfs"},
		{"stolen", ErrClaimNotBound, false, `volume "stolen" is not bound to persistentvolumeclaim "stolen"`},
		{"elsewhere", nil, false, `keeps its data on node "n2", not on this node (n1)`},
	}
	for _, tt := range tests {
		pod := testPod("uid-err-"+tt.claim, claimVol("v", tt.claim, false))
		_, err := m.SetupPod(context.Background(), pod, hostSources())
		if err == nil || (tt.is != nil && !errors.Is(err, tt.is)) || apierrors.IsNotFound(err) != tt.notFound || !strings.Contains(err.Error(), tt.msg) {
			t.Errorf("%s: err = %v", tt.claim, err)
		}
		teardownAndCheck(t, m, pod.UID)
	}
	noClaims := newTestManager(t, Config{})
	pod := testPod("uid-noclaims", claimVol("v", "pending", false))
	if _, err := noClaims.SetupPod(context.Background(), pod, hostSources()); !errors.Is(err, ErrUnsupported) {
		t.Errorf("without a claim source: %v", err)
	}
	teardownAndCheck(t, noClaims, pod.UID)
}
