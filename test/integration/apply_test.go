package integration

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	appsv1ac "k8s.io/client-go/applyconfigurations/apps/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"

	"github.com/orch/orch/test/testutil"
)

func init() {
	register("ServerSideApply", testServerSideApply)
}

func deploymentApply(name, ns string, replicas int32, image string) *appsv1ac.DeploymentApplyConfiguration {
	return appsv1ac.Deployment(name, ns).WithSpec(appsv1ac.DeploymentSpec().WithReplicas(replicas).
		WithSelector(metav1ac.LabelSelector().WithMatchLabels(map[string]string{"app": name})).
		WithTemplate(corev1ac.PodTemplateSpec().WithLabels(map[string]string{"app": name}).
			WithSpec(corev1ac.PodSpec().WithContainers(corev1ac.Container().WithName("web").WithImage(image)))))
}

// testServerSideApply: apply-create, managedFields per manager, a conflict
// between two appliers (409 naming the field and manager), force, and the
// fields an update records.
func testServerSideApply(t *testing.T, s *testutil.Server) {
	ctx := ctxT(t)
	ns := newNamespace(t, s.Clientset)
	deps := s.Clientset.AppsV1().Deployments(ns)
	d, err := deps.Apply(ctx, deploymentApply("web", ns, 2, "nginx:1"), metav1.ApplyOptions{FieldManager: "alice"})
	must(t, err, "apply-create")
	if len(d.ManagedFields) != 1 || d.ManagedFields[0].Manager != "alice" || d.ManagedFields[0].Operation != metav1.ManagedFieldsOperationApply {
		t.Fatalf("managedFields after apply-create: %+v", d.ManagedFields)
	}
	_, err = deps.Apply(ctx, deploymentApply("web", ns, 5, "nginx:1"), metav1.ApplyOptions{FieldManager: "bob"})
	st := wantCode(t, err, 409, "a second applier changing replicas")
	if !strings.Contains(st.Message, `Apply failed with 1 conflict: conflict with "alice": .spec.replicas`) {
		t.Fatalf("conflict message: %q", st.Message)
	}
	d, err = deps.Apply(ctx, deploymentApply("web", ns, 5, "nginx:1"), metav1.ApplyOptions{FieldManager: "bob", Force: true})
	must(t, err, "forced apply")
	if *d.Spec.Replicas != 5 {
		t.Fatalf("replicas after force: %d", *d.Spec.Replicas)
	}
	// alice stops managing replicas: her apply without it leaves bob's value.
	noReplicas := deploymentApply("web", ns, 0, "nginx:1")
	noReplicas.Spec.Replicas = nil
	d, err = deps.Apply(ctx, noReplicas, metav1.ApplyOptions{FieldManager: "alice"})
	must(t, err, "apply without replicas")
	if *d.Spec.Replicas != 5 || d.Spec.Template.Spec.Containers[0].Image != "nginx:1" {
		t.Fatalf("after alice's second apply: replicas %d image %s", *d.Spec.Replicas, d.Spec.Template.Spec.Containers[0].Image)
	}
	_, err = deps.Patch(ctx, "web", types.MergePatchType, []byte(`{"metadata":{"labels":{"team":"x"}}}`), metav1.PatchOptions{FieldManager: "carol"})
	must(t, err, "merge patch")
	d, err = deps.Get(ctx, "web", metav1.GetOptions{})
	must(t, err, "get")
	managers := map[string]string{}
	for _, e := range d.ManagedFields {
		managers[e.Manager] = string(e.Operation)
	}
	if managers["alice"] != "Apply" || managers["bob"] != "Apply" || managers["carol"] != "Update" {
		t.Fatalf("managers %v", managers)
	}
	_, err = s.Clientset.CoreV1().ConfigMaps(ns).Patch(ctx, "cm", types.ApplyPatchType, []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm}\n"), metav1.PatchOptions{})
	wantCode(t, err, 400, "apply without a field manager")
	_, err = s.Clientset.CoreV1().ConfigMaps(ns).Patch(ctx, "cm", types.ApplyPatchType, []byte("{not yaml"), metav1.PatchOptions{FieldManager: "x"})
	wantCode(t, err, 400, "apply of malformed YAML")
	_, err = s.Clientset.CoreV1().ConfigMaps(ns).Get(ctx, "cm", metav1.GetOptions{})
	wantCode(t, err, 404, "a failed apply left an object")
}
