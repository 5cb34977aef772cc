package localpath_test

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	agentlp "github.com/orch/orch/agent/localpath"
	"github.com/orch/orch/server/controllers/kit/kittest"
	"github.com/orch/orch/server/controllers/localpath"
	"github.com/orch/orch/server/controllers/pvbinder"
)

// start runs pvbinder and localpath on a real in-process API server.
func start(t *testing.T) kubernetes.Interface {
	t.Helper()
	client, _ := kittest.Run(t, localpath.New, kittest.Also(pvbinder.New))
	return client
}

func claim(name string, class *string) *corev1.PersistentVolumeClaim {
	return &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name},
		Spec: corev1.PersistentVolumeClaimSpec{AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			StorageClassName: class,
			Resources:        corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}}}}
}

func getClaim(t *testing.T, c kubernetes.Interface, name string) *corev1.PersistentVolumeClaim {
	t.Helper()
	pvc, err := c.CoreV1().PersistentVolumeClaims("default").Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return pvc
}

func getVolume(c kubernetes.Interface, name string) (*corev1.PersistentVolume, bool) {
	pv, err := c.CoreV1().PersistentVolumes().Get(context.Background(), name, metav1.GetOptions{})
	return pv, err == nil
}

func hasEvent(t *testing.T, c kubernetes.Interface, uid types.UID, reason string) bool {
	t.Helper()
	l, err := c.CoreV1().Events("").List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range l.Items {
		if e.InvolvedObject.UID == uid && e.Reason == reason {
			return true
		}
	}
	return false
}

func must[T any](t *testing.T) func(T, error) T {
	return func(v T, err error) T {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
}

// TestProvisionBindDelete: default class created; a claim without a class
// waits for its first consumer, is provisioned on the selected node, bound
// both ways, and after the claim is deleted its volume is Released and
// deleted, held by the finalizer until the node's agent drops it.
func TestProvisionBindDelete(t *testing.T) {
	c := start(t)
	ctx := context.Background()
	kittest.Until(t, "default class", func() bool {
		sc, err := c.StorageV1().StorageClasses().Get(ctx, agentlp.StorageClassName, metav1.GetOptions{})
		return err == nil && sc.Annotations[pvbinder.AnnDefaultClass] == "true" &&
			*sc.VolumeBindingMode == storagev1.VolumeBindingWaitForFirstConsumer && *sc.ReclaimPolicy == corev1.PersistentVolumeReclaimDelete
	})
	must[*corev1.Node](t)(c.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1",
		Labels:      map[string]string{"kubernetes.io/hostname": "n1"},
		Annotations: map[string]string{agentlp.NodeDirAnnotation: "/var/lib/orch/storage"}}}, metav1.CreateOptions{}))
	pvc := must[*corev1.PersistentVolumeClaim](t)(c.CoreV1().PersistentVolumeClaims("default").Create(ctx, claim("data", nil), metav1.CreateOptions{}))
	kittest.Until(t, "WaitForFirstConsumer event", func() bool { return hasEvent(t, c, pvc.UID, pvbinder.EventWaitForFirstConsumer) })
	if _, ok := getVolume(c, "pvc-"+string(pvc.UID)); ok {
		t.Fatal("provisioned before a node was selected")
	}

	pvc = getClaim(t, c, "data")
	pvc.Annotations = map[string]string{pvbinder.AnnSelectedNode: "n1"}
	must[*corev1.PersistentVolumeClaim](t)(c.CoreV1().PersistentVolumeClaims("default").Update(ctx, pvc, metav1.UpdateOptions{}))
	pvName := "pvc-" + string(pvc.UID)
	kittest.Until(t, "claim bound", func() bool {
		p := getClaim(t, c, "data")
		return p.Status.Phase == corev1.ClaimBound && p.Spec.VolumeName == pvName
	})
	pv, _ := getVolume(c, pvName)
	want := "/var/lib/orch/storage/" + pvName + "_default_data"
	if pv.Spec.HostPath == nil || pv.Spec.HostPath.Path != want || pv.Spec.ClaimRef.UID != pvc.UID ||
		pv.Labels[agentlp.NodeLabel] != "n1" || pv.Spec.StorageClassName != "local-path" ||
		!pvbinder.NodeAffinityAdmits(pv, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1", Labels: map[string]string{"kubernetes.io/hostname": "n1"}}}) {
		t.Fatalf("volume: %+v", pv)
	}
	kittest.Until(t, "volume Bound", func() bool { pv, _ := getVolume(c, pvName); return pv.Status.Phase == corev1.VolumeBound })
	if p := getClaim(t, c, "data"); p.Status.Capacity.Storage().String() != "1Gi" || p.Annotations[pvbinder.AnnBindCompleted] != "yes" {
		t.Fatalf("claim status: %+v", p.Status)
	}
	if !hasEvent(t, c, pvc.UID, localpath.EventProvisioningSucceeded) {
		t.Error("no ProvisioningSucceeded event")
	}

	if err := c.CoreV1().PersistentVolumeClaims("default").Delete(ctx, "data", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	kittest.Until(t, "volume terminating", func() bool { pv, ok := getVolume(c, pvName); return ok && pv.DeletionTimestamp != nil })
	pv, _ = getVolume(c, pvName)
	pv.Finalizers = nil // what the node's agent does once the data is gone
	must[*corev1.PersistentVolume](t)(c.CoreV1().PersistentVolumes().Update(ctx, pv, metav1.UpdateOptions{}))
	kittest.Until(t, "volume gone", func() bool { _, ok := getVolume(c, pvName); return !ok })
}

// TestRetainAndStatic: a Retain local-path class keeps the released
// volume; a static volume binds to a matching claim of the same class; a
// static Delete volume without a provisioner fails with upstream's event.
func TestRetainAndStatic(t *testing.T) {
	c := start(t)
	ctx := context.Background()
	must[*storagev1.StorageClass](t)(c.StorageV1().StorageClasses().Create(ctx, &storagev1.StorageClass{
		ObjectMeta: metav1.ObjectMeta{Name: "keep"}, Provisioner: agentlp.ProvisionerName,
		ReclaimPolicy: ptr.To(corev1.PersistentVolumeReclaimRetain), VolumeBindingMode: ptr.To(storagev1.VolumeBindingWaitForFirstConsumer)}, metav1.CreateOptions{}))
	must[*corev1.Node](t)(c.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1",
		Annotations: map[string]string{agentlp.NodeDirAnnotation: "/data/storage"}}}, metav1.CreateOptions{}))
	kept := claim("kept", ptr.To("keep"))
	kept.Annotations = map[string]string{pvbinder.AnnSelectedNode: "n1"}
	kept = must[*corev1.PersistentVolumeClaim](t)(c.CoreV1().PersistentVolumeClaims("default").Create(ctx, kept, metav1.CreateOptions{}))
	kittest.Until(t, "kept bound", func() bool { return getClaim(t, c, "kept").Status.Phase == corev1.ClaimBound })

	static := &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: "static", Labels: map[string]string{"tier": "fast"}},
		Spec: corev1.PersistentVolumeSpec{Capacity: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("5Gi")},
			AccessModes:                   []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce, corev1.ReadOnlyMany},
			PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimDelete,
			PersistentVolumeSource:        corev1.PersistentVolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/tmp/static"}}}}
	must[*corev1.PersistentVolume](t)(c.CoreV1().PersistentVolumes().Create(ctx, static, metav1.CreateOptions{}))
	kittest.Until(t, "static Available", func() bool { pv, _ := getVolume(c, "static"); return pv.Status.Phase == corev1.VolumeAvailable })
	sel := claim("sel", ptr.To(""))
	sel.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"tier": "fast"}}
	must[*corev1.PersistentVolumeClaim](t)(c.CoreV1().PersistentVolumeClaims("default").Create(ctx, sel, metav1.CreateOptions{}))
	kittest.Until(t, "sel bound to static", func() bool {
		p := getClaim(t, c, "sel")
		return p.Status.Phase == corev1.ClaimBound && p.Spec.VolumeName == "static" && p.Status.Capacity.Storage().String() == "5Gi"
	})

	for _, n := range []string{"kept", "sel"} {
		if err := c.CoreV1().PersistentVolumeClaims("default").Delete(ctx, n, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	kittest.Until(t, "kept volume Released", func() bool {
		pv, ok := getVolume(c, "pvc-"+string(kept.UID))
		return ok && pv.Status.Phase == corev1.VolumeReleased
	})
	kittest.Until(t, "static volume Failed", func() bool { pv, _ := getVolume(c, "static"); return pv.Status.Phase == corev1.VolumeFailed })
	pv, _ := getVolume(c, "static")
	if !hasEvent(t, c, pv.UID, pvbinder.EventVolumeFailedDelete) {
		t.Error("no VolumeFailedDelete event")
	}
	time.Sleep(200 * time.Millisecond) // give a wrong deletion the chance to happen
	if pv, ok := getVolume(c, "pvc-"+string(kept.UID)); !ok || pv.DeletionTimestamp != nil {
		t.Fatalf("retained volume deleted: %v", pv)
	}
	if _, err := c.CoreV1().PersistentVolumeClaims("default").Get(ctx, "kept", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("claim still there: %v", err)
	}
}

// TestClaimProtection: a claim used by a pod stays (Terminating, its
// volume Bound) until the pod is gone.
func TestClaimProtection(t *testing.T) {
	c := start(t)
	ctx := context.Background()
	must[*corev1.PersistentVolume](t)(c.CoreV1().PersistentVolumes().Create(ctx, &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: "pv"},
		Spec: corev1.PersistentVolumeSpec{Capacity: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")},
			AccessModes:            []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			PersistentVolumeSource: corev1.PersistentVolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/tmp/pv"}}}}, metav1.CreateOptions{}))
	must[*corev1.PersistentVolumeClaim](t)(c.CoreV1().PersistentVolumeClaims("default").Create(ctx, claim("used", ptr.To("")), metav1.CreateOptions{}))
	kittest.Until(t, "bound with the protection finalizer", func() bool {
		p := getClaim(t, c, "used")
		return p.Status.Phase == corev1.ClaimBound && len(p.Finalizers) == 1 && p.Finalizers[0] == pvbinder.ProtectionFinalizer
	})
	must[*corev1.Pod](t)(c.CoreV1().Pods("default").Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "user"},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox:1.36"}},
			Volumes: []corev1.Volume{{Name: "d", VolumeSource: corev1.VolumeSource{
				PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "used"}}}}}}, metav1.CreateOptions{}))
	if err := c.CoreV1().PersistentVolumeClaims("default").Delete(ctx, "used", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond) // give a wrong release the chance to happen
	if p := getClaim(t, c, "used"); p.DeletionTimestamp == nil {
		t.Fatal("claim not terminating")
	}
	if pv, _ := getVolume(c, "pv"); pv.Status.Phase != corev1.VolumeBound {
		t.Fatalf("volume released under a pod: %s", pv.Status.Phase)
	}
	if err := c.CoreV1().Pods("default").Delete(ctx, "user", metav1.DeleteOptions{GracePeriodSeconds: ptr.To(int64(0))}); err != nil {
		t.Fatal(err)
	}
	kittest.Until(t, "volume Released once the pod is gone", func() bool {
		pv, _ := getVolume(c, "pv")
		return pv.Status.Phase == corev1.VolumeReleased
	})
	if _, err := c.CoreV1().PersistentVolumeClaims("default").Get(ctx, "used", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("claim still there: %v", err)
	}
}

// TestClaimBindsToALaterVolume: a claim that found no volume binds when a
// matching one appears, without waiting for a resync.
func TestClaimBindsToALaterVolume(t *testing.T) {
	c := start(t)
	ctx := context.Background()
	must[*corev1.PersistentVolumeClaim](t)(c.CoreV1().PersistentVolumeClaims("default").Create(ctx, claim("early", ptr.To("")), metav1.CreateOptions{}))
	kittest.Until(t, "the claim pending with its protection finalizer", func() bool {
		p := getClaim(t, c, "early")
		return p.Status.Phase == corev1.ClaimPending && len(p.Finalizers) == 1
	})
	time.Sleep(100 * time.Millisecond) // the binder has looked for a volume and found none
	must[*corev1.PersistentVolume](t)(c.CoreV1().PersistentVolumes().Create(ctx, &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: "late"},
		Spec: corev1.PersistentVolumeSpec{Capacity: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")},
			AccessModes:            []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			PersistentVolumeSource: corev1.PersistentVolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/tmp/late"}}}}, metav1.CreateOptions{}))
	kittest.Until(t, "the claim bound to the later volume", func() bool {
		p := getClaim(t, c, "early")
		return p.Status.Phase == corev1.ClaimBound && p.Spec.VolumeName == "late"
	})
}
