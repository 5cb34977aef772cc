package registry

import (
	"context"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
)

func createdDeployment(t *testing.T) (*Resource, *appsv1.Deployment) {
	r := resourceFor(t, "apps", "deployments")
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "web"}, Spec: appsv1.DeploymentSpec{
		Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}, Template: goodTemplate()}}
	d.Status.Replicas = 7 // clients cannot set status on create
	requireNoErr(t, prepareCreate(t, r, d))
	if d.Status.Replicas != 0 || d.Generation != 1 {
		t.Fatalf("create kept status %+v / generation %d", d.Status, d.Generation)
	}
	return r, d
}

func TestDeploymentUpdateRules(t *testing.T) {
	r, old := createdDeployment(t)
	old.Status.ReadyReplicas = 1

	// Main update: status is kept, a spec change bumps the generation.
	n := old.DeepCopy()
	n.Spec.Replicas = ptr.To[int32](3)
	n.Status.ReadyReplicas = 99
	requireNoErr(t, prepareUpdate(r, n, old))
	if n.Status.ReadyReplicas != 1 || n.Generation != 2 {
		t.Fatalf("update: status %+v generation %d", n.Status, n.Generation)
	}

	// Metadata-only update (labels) keeps the generation.
	n = old.DeepCopy()
	n.Labels = map[string]string{"team": "a"}
	requireNoErr(t, prepareUpdate(r, n, old))
	if n.Generation != 1 {
		t.Fatalf("label change bumped generation to %d", n.Generation)
	}

	// Selector is immutable.
	n = old.DeepCopy()
	n.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web", "tier": "x"}}
	n.Spec.Template.Labels["tier"] = "x"
	requireErr(t, prepareUpdate(r, n, old), field.ErrorTypeInvalid, "spec.selector")

	// Status update keeps spec and labels, takes status.
	n = old.DeepCopy()
	n.Spec.Replicas = ptr.To[int32](5)
	n.Labels = map[string]string{"x": "y"}
	n.Status.ReadyReplicas = 1
	n.Status.AvailableReplicas = 1
	r.Strategy.PrepareForStatusUpdate(context.Background(), n, old)
	requireNoErr(t, r.Strategy.ValidateStatusUpdate(context.Background(), n, old))
	if *n.Spec.Replicas != 1 || n.Labels != nil || n.Status.AvailableReplicas != 1 || n.Generation != 1 {
		t.Fatalf("status update: spec %v labels %v status %+v gen %d", *n.Spec.Replicas, n.Labels, n.Status, n.Generation)
	}
}

func TestPodUpdateRules(t *testing.T) {
	r := resourceFor(t, "", "pods")
	old := goodPod("p")
	requireNoErr(t, prepareCreate(t, r, old))

	for _, tc := range []struct {
		name     string
		mut      func(*corev1.Pod)
		wantType field.ErrorType
		wantPath string
	}{
		{"image", func(p *corev1.Pod) { p.Spec.Containers[0].Image = "nginx:1.26" }, "", ""},
		{"add toleration", func(p *corev1.Pod) {
			p.Spec.Tolerations = append(p.Spec.Tolerations, corev1.Toleration{Key: "k", Operator: corev1.TolerationOpExists})
		}, "", ""},
		{"activeDeadlineSeconds set", func(p *corev1.Pod) { p.Spec.ActiveDeadlineSeconds = ptr.To[int64](30) }, "", ""},
		{"labels", func(p *corev1.Pod) { p.Labels["v"] = "2" }, "", ""},
		{"ports", func(p *corev1.Pod) { p.Spec.Containers[0].Ports[0].ContainerPort = 8080 }, field.ErrorTypeForbidden, "spec"},
		{"add container", func(p *corev1.Pod) {
			p.Spec.Containers = append(p.Spec.Containers, corev1.Container{Name: "b", Image: "b"})
		}, field.ErrorTypeForbidden, "spec.containers"},
		{"restartPolicy", func(p *corev1.Pod) { p.Spec.RestartPolicy = corev1.RestartPolicyNever }, field.ErrorTypeForbidden, "spec"},
		{"name", func(p *corev1.Pod) { p.Name = "q" }, field.ErrorTypeInvalid, "metadata.name"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := old.DeepCopy()
			tc.mut(n)
			errs := prepareUpdate(r, n, old)
			if tc.wantType == "" {
				requireNoErr(t, errs)
				return
			}
			requireErr(t, errs, tc.wantType, tc.wantPath)
		})
	}

	// Pod spec change (image) bumps the generation; status updates keep spec.
	n := old.DeepCopy()
	n.Spec.Containers[0].Image = "nginx:1.26"
	requireNoErr(t, prepareUpdate(r, n, old))
	if n.Generation != 2 {
		t.Errorf("image change: generation %d, want 2", n.Generation)
	}
	s := old.DeepCopy()
	s.Spec.NodeName = "n1"
	s.Status.Phase = corev1.PodRunning
	s.OwnerReferences = []metav1.OwnerReference{{Kind: "X", Name: "x", APIVersion: "v1", UID: "u"}}
	r.Strategy.PrepareForStatusUpdate(context.Background(), s, old)
	if s.Spec.NodeName != "" || s.Status.Phase != corev1.PodRunning || s.OwnerReferences != nil || s.Status.QOSClass != old.Status.QOSClass {
		t.Errorf("pod status update: %+v", s)
	}
}

func TestImmutableDataAndSecretType(t *testing.T) {
	cmRes := resourceFor(t, "", "configmaps")
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "c"}, Data: map[string]string{"a": "1"}, Immutable: ptr.To(true)}
	requireNoErr(t, prepareCreate(t, cmRes, cm))
	n := cm.DeepCopy()
	n.Data["a"] = "2"
	requireErr(t, prepareUpdate(cmRes, n, cm), field.ErrorTypeForbidden, "data")
	n = cm.DeepCopy()
	n.Immutable = ptr.To(false)
	requireErr(t, prepareUpdate(cmRes, n, cm), field.ErrorTypeForbidden, "immutable")

	secRes := resourceFor(t, "", "secrets")
	sec := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "s"}, Data: map[string][]byte{"a": {1}}}
	requireNoErr(t, prepareCreate(t, secRes, sec))
	ns := sec.DeepCopy()
	ns.Type = corev1.SecretTypeBasicAuth
	requireErr(t, prepareUpdate(secRes, ns, sec), field.ErrorTypeInvalid, "type")
	ns = sec.DeepCopy()
	ns.Data["b"] = []byte{2}
	requireNoErr(t, prepareUpdate(secRes, ns, sec))
}

func TestJobAndPVCImmutability(t *testing.T) {
	jr := resourceFor(t, "batch", "jobs")
	tmpl := goodTemplate()
	tmpl.Spec.RestartPolicy = corev1.RestartPolicyNever
	j := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "j"}, Spec: batchv1.JobSpec{Template: tmpl}}
	requireNoErr(t, prepareCreate(t, jr, j))
	n := j.DeepCopy()
	n.Spec.Template.Spec.Containers[0].Image = "other"
	requireErr(t, prepareUpdate(jr, n, j), field.ErrorTypeInvalid, "spec.template")
	n = j.DeepCopy()
	n.Spec.Suspend = ptr.To(true)
	requireNoErr(t, prepareUpdate(jr, n, j))

	pr := resourceFor(t, "", "persistentvolumeclaims")
	pvc := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "c"}, Spec: corev1.PersistentVolumeClaimSpec{
		AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
		Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}}}}
	requireNoErr(t, prepareCreate(t, pr, pvc))
	np := pvc.DeepCopy()
	np.Spec.VolumeName = "pv-1" // binding is allowed once
	requireNoErr(t, prepareUpdate(pr, np, pvc))
	np = pvc.DeepCopy()
	np.Spec.AccessModes = []corev1.PersistentVolumeAccessMode{corev1.ReadWriteMany}
	requireErr(t, prepareUpdate(pr, np, pvc), field.ErrorTypeForbidden, "spec")
}

func TestNamespaceUpdateKeepsFinalizers(t *testing.T) {
	r := resourceFor(t, "", "namespaces")
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "a"}}
	requireNoErr(t, prepareCreate(t, r, ns))
	n := ns.DeepCopy()
	n.Spec.Finalizers = nil
	n.Status.Phase = corev1.NamespaceTerminating
	requireNoErr(t, prepareUpdate(r, n, ns))
	if len(n.Spec.Finalizers) != 1 || n.Status.Phase != corev1.NamespaceActive {
		t.Fatalf("namespace update: %+v", n)
	}
}

func TestNodeCreateKeepsStatus(t *testing.T) {
	r := resourceFor(t, "", "nodes")
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1"}, Status: corev1.NodeStatus{
		Capacity: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4")}}}
	requireNoErr(t, prepareCreate(t, r, node))
	if node.Status.Allocatable.Cpu().String() != "4" {
		t.Fatalf("node status/allocatable lost: %+v", node.Status)
	}
}

func TestPodStatusTransitions(t *testing.T) {
	r := resourceFor(t, "", "pods")
	old := goodPod("p")
	old.Spec.RestartPolicy = corev1.RestartPolicyNever
	requireNoErr(t, prepareCreate(t, r, old))
	old.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "web",
		State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 1}}}}
	n := old.DeepCopy()
	n.Status.ContainerStatuses[0].State = corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}
	r.Strategy.PrepareForStatusUpdate(context.Background(), n, old)
	requireErr(t, r.Strategy.ValidateStatusUpdate(context.Background(), n, old), field.ErrorTypeForbidden, "status.containerStatuses[0].state")

	n = old.DeepCopy()
	n.Status.PodIPs = []corev1.PodIP{{IP: "10.42.0.300"}}
	r.Strategy.PrepareForStatusUpdate(context.Background(), n, old)
	requireErr(t, r.Strategy.ValidateStatusUpdate(context.Background(), n, old), field.ErrorTypeInvalid, "status.podIPs[0]")
}
