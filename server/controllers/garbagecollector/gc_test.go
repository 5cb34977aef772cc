package garbagecollector

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/orch/orch/server/controllers/kit/kittest"
)

// startGC runs the collector against a real in-process API server.
func startGC(t *testing.T) kubernetes.Interface {
	t.Helper()
	client, _ := kittest.Run(t, New)
	return client
}

func cm(t *testing.T, cs kubernetes.Interface, name string, owners ...*corev1.ConfigMap) *corev1.ConfigMap {
	t.Helper()
	obj := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"}}
	for _, o := range owners {
		obj.OwnerReferences = append(obj.OwnerReferences, metav1.OwnerReference{
			APIVersion: "v1", Kind: "ConfigMap", Name: o.Name, UID: o.UID, BlockOwnerDeletion: ptr.To(true)})
	}
	out, err := cs.CoreV1().ConfigMaps("default").Create(context.Background(), obj, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func del(t *testing.T, cs kubernetes.Interface, name string, p metav1.DeletionPropagation) {
	t.Helper()
	if err := cs.CoreV1().ConfigMaps("default").Delete(context.Background(), name, metav1.DeleteOptions{PropagationPolicy: &p}); err != nil {
		t.Fatal(err)
	}
}

func getCM(cs kubernetes.Interface, name string) (*corev1.ConfigMap, bool) {
	c, err := cs.CoreV1().ConfigMaps("default").Get(context.Background(), name, metav1.GetOptions{})
	return c, !apierrors.IsNotFound(err)
}

func TestBackgroundDeletesDependents(t *testing.T) {
	cs := startGC(t)
	owner := cm(t, cs, "owner")
	child := cm(t, cs, "child", owner)
	cm(t, cs, "grandchild", child)
	del(t, cs, "owner", metav1.DeletePropagationBackground)
	kittest.Until(t, "child and grandchild deleted", func() bool {
		_, a := getCM(cs, "child")
		_, b := getCM(cs, "grandchild")
		return !a && !b
	})
}

func TestForegroundWaitsForDependents(t *testing.T) {
	cs := startGC(t)
	owner := cm(t, cs, "owner")
	child := cm(t, cs, "child", owner)
	// A finalizer nobody removes keeps the child (and so the owner) around.
	child.Finalizers = []string{"example.com/hold"}
	if _, err := cs.CoreV1().ConfigMaps("default").Update(context.Background(), child, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	del(t, cs, "owner", metav1.DeletePropagationForeground)
	kittest.Until(t, "child marked deleted", func() bool { c, ok := getCM(cs, "child"); return ok && c.DeletionTimestamp != nil })
	o, ok := getCM(cs, "owner")
	if !ok || o.DeletionTimestamp == nil || o.Finalizers[0] != metav1.FinalizerDeleteDependents {
		t.Fatalf("owner should wait with the foregroundDeletion finalizer: %+v", o)
	}
	if err := patchFinalizers(cs, "child"); err != nil {
		t.Fatal(err)
	}
	kittest.Until(t, "owner deleted", func() bool { _, ok := getCM(cs, "owner"); return !ok })
}

func patchFinalizers(cs kubernetes.Interface, name string) error {
	_, err := cs.CoreV1().ConfigMaps("default").Patch(context.Background(), name, types.MergePatchType,
		[]byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{})
	return err
}

func TestOrphanKeepsDependents(t *testing.T) {
	cs := startGC(t)
	owner := cm(t, cs, "owner")
	cm(t, cs, "child", owner)
	del(t, cs, "owner", metav1.DeletePropagationOrphan)
	kittest.Until(t, "owner deleted", func() bool { _, ok := getCM(cs, "owner"); return !ok })
	c, ok := getCM(cs, "child")
	if !ok || len(c.OwnerReferences) != 0 {
		t.Fatalf("child should stay without owner references: %+v", c)
	}
}

func TestDanglingAndPartialOwners(t *testing.T) {
	cs := startGC(t)
	ghost := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "ghost", UID: "never-existed"}}
	cm(t, cs, "orphan", ghost)
	alive := cm(t, cs, "alive")
	cm(t, cs, "shared", alive, ghost)
	kittest.Until(t, "dependent of a never-existing owner deleted", func() bool { _, ok := getCM(cs, "orphan"); return !ok })
	kittest.Until(t, "reference to the gone owner dropped", func() bool {
		c, ok := getCM(cs, "shared")
		return ok && len(c.OwnerReferences) == 1 && c.OwnerReferences[0].UID == alive.UID
	})
}

// TestForegroundCycle: three objects owning each other in a circle, all
// references blocking, go away when one is deleted in the foreground.
func TestForegroundCycle(t *testing.T) {
	cs := startGC(t)
	a, b, c := cm(t, cs, "a"), cm(t, cs, "b"), cm(t, cs, "c")
	for _, pair := range [][2]*corev1.ConfigMap{{a, c}, {b, a}, {c, b}} {
		dep, owner := pair[0], pair[1]
		patch := `{"metadata":{"ownerReferences":[{"apiVersion":"v1","kind":"ConfigMap","name":"` + owner.Name +
			`","uid":"` + string(owner.UID) + `","controller":true,"blockOwnerDeletion":true}]}}`
		if _, err := cs.CoreV1().ConfigMaps("default").Patch(context.Background(), dep.Name, types.StrategicMergePatchType,
			[]byte(patch), metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	del(t, cs, "a", metav1.DeletePropagationForeground)
	kittest.Until(t, "all three deleted", func() bool {
		_, x := getCM(cs, "a")
		_, y := getCM(cs, "b")
		_, z := getCM(cs, "c")
		return !x && !y && !z
	})
}
