package volumes

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/orch/orch/agent/localpath"
)

// ErrClaimNotBound means a pod's PersistentVolumeClaim has no bound
// volume yet; the pod waits (its sync retries with back-off, each failure
// a FailedMount event naming the claim).
var ErrClaimNotBound = errors.New("waiting for the claim to be bound to a volume")

// ClaimSource reads the claims of a pod and their volumes (NotFound as an
// apierrors NotFound).
type ClaimSource interface {
	PersistentVolumeClaim(ctx context.Context, namespace, name string) (*corev1.PersistentVolumeClaim, error)
	PersistentVolume(ctx context.Context, name string) (*corev1.PersistentVolume, error)
}

// APIClaims is a ClaimSource reading through client (the node authorizer
// lets a node get the claims of its pods and persistent volumes).
func APIClaims(client kubernetes.Interface) ClaimSource { return apiClaims{client} }

type apiClaims struct{ c kubernetes.Interface }

func (a apiClaims) PersistentVolumeClaim(ctx context.Context, ns, name string) (*corev1.PersistentVolumeClaim, error) {
	return a.c.CoreV1().PersistentVolumeClaims(ns).Get(ctx, name, metav1.GetOptions{})
}

func (a apiClaims) PersistentVolume(ctx context.Context, name string) (*corev1.PersistentVolume, error) {
	return a.c.CoreV1().PersistentVolumes().Get(ctx, name, metav1.GetOptions{})
}

// setupClaim resolves claim → bound volume → host path on this node.
func (m *Manager) setupClaim(ctx context.Context, pod *corev1.Pod, src *corev1.PersistentVolumeClaimVolumeSource) (Volume, error) {
	if m.cfg.Claims == nil {
		return Volume{}, fmt.Errorf("%w: persistentVolumeClaim (no claim source configured)", ErrUnsupported)
	}
	pvc, err := m.cfg.Claims.PersistentVolumeClaim(ctx, pod.Namespace, src.ClaimName)
	if err != nil {
		return Volume{}, fmt.Errorf("persistentvolumeclaim %q: %w", src.ClaimName, err)
	}
	if pvc.DeletionTimestamp != nil {
		return Volume{}, fmt.Errorf("persistentvolumeclaim %q is being deleted", src.ClaimName)
	}
	if pvc.Spec.VolumeName == "" || pvc.Status.Phase != corev1.ClaimBound {
		return Volume{}, fmt.Errorf("persistentvolumeclaim %q is %s: %w", src.ClaimName, phaseOf(pvc), ErrClaimNotBound)
	}
	pv, err := m.cfg.Claims.PersistentVolume(ctx, pvc.Spec.VolumeName)
	if err != nil {
		return Volume{}, fmt.Errorf("persistentvolumeclaim %q: volume %q: %w", src.ClaimName, pvc.Spec.VolumeName, err)
	}
	if r := pv.Spec.ClaimRef; r == nil || r.Namespace != pvc.Namespace || r.Name != pvc.Name || r.UID != pvc.UID {
		return Volume{}, fmt.Errorf("volume %q is not bound to persistentvolumeclaim %q: %w", pv.Name, src.ClaimName, ErrClaimNotBound)
	}
	if on := pv.Labels[localpath.NodeLabel]; on != "" && m.cfg.NodeName != "" && on != m.cfg.NodeName {
		return Volume{}, fmt.Errorf("persistentvolumeclaim %q: volume %q keeps its data on node %q, not on this node (%s)",
			src.ClaimName, pv.Name, on, m.cfg.NodeName)
	}
	path, err := m.volumePath(pv)
	if err != nil {
		return Volume{}, fmt.Errorf("persistentvolumeclaim %q: volume %q: %w", src.ClaimName, pv.Name, err)
	}
	return Volume{HostPath: path, ReadOnly: src.ReadOnly}, nil
}

func phaseOf(pvc *corev1.PersistentVolumeClaim) string {
	if pvc.Status.Phase == "" {
		return string(corev1.ClaimPending)
	}
	return string(pvc.Status.Phase)
}

// volumePath prepares the node-local directory of pv: a hostPath (after
// the kubelet's type checks; a local-path volume's directory is created
// world-writable, as k3s's provisioner does) or a local volume (must exist).
func (m *Manager) volumePath(pv *corev1.PersistentVolume) (string, error) {
	switch {
	case pv.Spec.HostPath != nil:
		hp := pv.Spec.HostPath
		if m.isLocalPath(pv) {
			return hp.Path, ensureSharedDir(hp.Path)
		}
		v, err := setupHostPath(hp)
		return v.HostPath, err
	case pv.Spec.Local != nil:
		return pv.Spec.Local.Path, typeMatchedOrError(pv.Spec.Local.Path, "Directory", "directory")
	}
	return "", fmt.Errorf("%w: persistent volume source %s", ErrUnsupported, pvSourceType(pv))
}

// isLocalPath: a volume of orch's provisioner inside this node's storage dir.
func (m *Manager) isLocalPath(pv *corev1.PersistentVolume) bool {
	return m.cfg.StorageDir != "" && pv.Annotations[localpath.ProvisionedByAnnotation] == localpath.ProvisionerName &&
		localpath.IsVolumePath(m.cfg.StorageDir, pv.Spec.HostPath.Path)
}

// ensureSharedDir creates dir mode 0777 (whatever the umask) when missing;
// a missing parent (the storage dir) is created 0700: containers reach
// the volume through the bind mount, not through the parent.
func ensureSharedDir(dir string) error {
	if info, err := os.Stat(dir); err == nil {
		if !info.IsDir() {
			return fmt.Errorf("%s exists and is not a directory", dir)
		}
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o700); err != nil {
		return fmt.Errorf("create %s: %w", filepath.Dir(dir), err)
	}
	if err := os.Mkdir(dir, 0o777); err != nil && !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("create %s: %w", dir, err)
	}
	if err := os.Chmod(dir, 0o777); err != nil {
		return fmt.Errorf("chmod %s: %w", dir, err)
	}
	return nil
}

// pvSourceType names the set source field of pv ("nfs").
func pvSourceType(pv *corev1.PersistentVolume) string {
	return setField(pv.Spec.PersistentVolumeSource)
}

// setField names the first non-nil pointer field of a source struct by its
// JSON name.
func setField(src any) string {
	rv := reflect.ValueOf(src)
	rt := rv.Type()
	for i := 0; i < rv.NumField(); i++ {
		if f := rv.Field(i); f.Kind() == reflect.Pointer && !f.IsNil() {
			name, _, _ := strings.Cut(rt.Field(i).Tag.Get("json"), ",")
			return name
		}
	}
	return "<none>"
}
