package integration

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	nodev1 "k8s.io/api/node/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/orch/orch/test/testutil"
)

func init() {
	register("RuntimeClassAdmission", testRuntimeClassAdmission)
}

// testRuntimeClassAdmission: a pod naming a missing RuntimeClass is
// refused (403); one naming a class gets its overhead, node selector and
// tolerations; an overhead the class does not define is refused.
func testRuntimeClassAdmission(t *testing.T, s *testutil.Server) {
	ctx := ctxT(t)
	ns := newNamespace(t, s.Clientset)
	pods := s.Clientset.CoreV1().Pods(ns)
	pod := func(name, class string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.PodSpec{RuntimeClassName: ptr.To(class),
			Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}}
	}
	_, err := pods.Create(ctx, pod("missing", "no-such-class"), metav1.CreateOptions{})
	if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), `RuntimeClass "no-such-class" not found`) {
		t.Fatalf("pod with a missing RuntimeClass: %v", err)
	}
	rcName := ns + "-rc"
	overhead := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("10m"), corev1.ResourceMemory: resource.MustParse("1Mi")}
	_, err = s.Clientset.NodeV1().RuntimeClasses().Create(ctx, &nodev1.RuntimeClass{ObjectMeta: metav1.ObjectMeta{Name: rcName},
		Handler: "runc", Overhead: &nodev1.Overhead{PodFixed: overhead},
		Scheduling: &nodev1.Scheduling{NodeSelector: map[string]string{"sandbox": "yes"},
			Tolerations: []corev1.Toleration{{Key: "sandbox", Operator: corev1.TolerationOpExists}}}}, metav1.CreateOptions{})
	must(t, err, "create RuntimeClass")
	t.Cleanup(func() { _ = s.Clientset.NodeV1().RuntimeClasses().Delete(ctx, rcName, metav1.DeleteOptions{}) })
	p, err := pods.Create(ctx, pod("classy", rcName), metav1.CreateOptions{})
	must(t, err, "pod with a RuntimeClass")
	if !p.Spec.Overhead.Cpu().Equal(resource.MustParse("10m")) || p.Spec.NodeSelector["sandbox"] != "yes" ||
		len(p.Spec.Tolerations) == 0 || p.Spec.Tolerations[0].Key != "sandbox" {
		t.Fatalf("pod not given the class's overhead and scheduling: %+v", p.Spec)
	}
	bad := pod("overhead", rcName)
	bad.Spec.Overhead = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}
	if _, err := pods.Create(ctx, bad, metav1.CreateOptions{}); !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "Overhead doesn't match") {
		t.Fatalf("pod with another overhead: %v", err)
	}
}
