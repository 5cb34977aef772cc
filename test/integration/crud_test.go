package integration

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/orch/orch/test/testutil"
)

func init() {
	register("CRUDConfigMap", testCRUDConfigMap)
	register("CRUDSecret", testCRUDSecret)
	register("CRUDService", testCRUDService)
	register("CRUDDeployment", testCRUDDeployment)
	register("CRUDPod", testCRUDPod)
}

func testCRUDConfigMap(t *testing.T, s *testutil.Server) {
	ctx, cs := ctxT(t), s.Clientset
	ns := newNamespace(t, cs)
	c := cs.CoreV1().ConfigMaps(ns)
	created, err := c.Create(ctx, cm(ns, "app-config", map[string]string{"APP_COLOR": "blue"}), metav1.CreateOptions{})
	must(t, err, "create")
	if created.UID == "" || created.ResourceVersion == "" || created.CreationTimestamp.IsZero() {
		t.Fatalf("create did not set uid/resourceVersion/creationTimestamp: %+v", created.ObjectMeta)
	}
	got, err := c.Get(ctx, "app-config", metav1.GetOptions{})
	must(t, err, "get")
	if got.Data["APP_COLOR"] != "blue" || got.ResourceVersion != created.ResourceVersion || got.UID != created.UID {
		t.Fatalf("get = %+v, want what create returned %+v", got, created)
	}
	got.Data["APP_COLOR"] = "green"
	upd, err := c.Update(ctx, got, metav1.UpdateOptions{})
	must(t, err, "update")
	if upd.ResourceVersion == got.ResourceVersion || upd.Data["APP_COLOR"] != "green" {
		t.Fatalf("update: rv %s→%s data %v", got.ResourceVersion, upd.ResourceVersion, upd.Data)
	}
	_, err = c.Create(ctx, cm(ns, "app-config", nil), metav1.CreateOptions{})
	wantCode(t, err, 409, "create duplicate")
	list, err := c.List(ctx, metav1.ListOptions{})
	must(t, err, "list")
	if len(list.Items) != 1 || list.Items[0].Name != "app-config" || list.ResourceVersion == "" {
		t.Fatalf("list = %d items rv %q, want 1 (app-config)", len(list.Items), list.ResourceVersion)
	}
	must(t, c.Delete(ctx, "app-config", metav1.DeleteOptions{}), "delete")
	_, err = c.Get(ctx, "app-config", metav1.GetOptions{})
	wantCode(t, err, 404, "get after delete")
	err = c.Delete(ctx, "app-config", metav1.DeleteOptions{})
	wantCode(t, err, 404, "delete twice")
}

func testCRUDSecret(t *testing.T, s *testutil.Server) {
	ctx, cs := ctxT(t), s.Clientset
	ns := newNamespace(t, cs)
	c := cs.CoreV1().Secrets(ns)
	sec := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "app-secret"},
		Type:       corev1.SecretTypeOpaque,
		Data:       map[string][]byte{"DB_PASSWORD": []byte("s3cret!")},
		StringData: map[string]string{"API_KEY": "sk-abc123xyz"},
	}
	_, err := c.Create(ctx, sec, metav1.CreateOptions{})
	must(t, err, "create")
	got, err := c.Get(ctx, "app-secret", metav1.GetOptions{})
	must(t, err, "get")
	if string(got.Data["DB_PASSWORD"]) != "s3cret!" || string(got.Data["API_KEY"]) != "sk-abc123xyz" {
		t.Fatalf("secret data = %q (stringData must be merged into data)", got.Data)
	}
	if len(got.StringData) != 0 || got.Type != corev1.SecretTypeOpaque {
		t.Fatalf("stringData kept (%v) or type wrong (%s)", got.StringData, got.Type)
	}
	got.Data["DB_USERNAME"] = []byte("admin")
	_, err = c.Update(ctx, got, metav1.UpdateOptions{})
	must(t, err, "update")
	got.Type = corev1.SecretTypeDockerConfigJson
	_, err = c.Update(ctx, got, metav1.UpdateOptions{})
	if err == nil || !apierrors.IsInvalid(err) && !apierrors.IsConflict(err) {
		t.Fatalf("changing secret type: err %v, want 422 (type is immutable)", err)
	}
	must(t, c.Delete(ctx, "app-secret", metav1.DeleteOptions{}), "delete")
	_, err = c.Get(ctx, "app-secret", metav1.GetOptions{})
	wantCode(t, err, 404, "get after delete")
}

func webService(ns, name string) *corev1.Service {
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: corev1.ServiceSpec{
			Selector: map[string]string{"app": "web"},
			Ports:    []corev1.ServicePort{{Port: 80, TargetPort: intstr.FromInt32(8080)}},
		},
	}
}

func testCRUDService(t *testing.T, s *testutil.Server) {
	ctx, cs := ctxT(t), s.Clientset
	ns := newNamespace(t, cs)
	c := cs.CoreV1().Services(ns)
	created, err := c.Create(ctx, webService(ns, "web-service"), metav1.CreateOptions{})
	must(t, err, "create")
	if created.Spec.Type != corev1.ServiceTypeClusterIP || created.Spec.ClusterIP == "" ||
		created.Spec.Ports[0].Protocol != corev1.ProtocolTCP || created.Spec.SessionAffinity != corev1.ServiceAffinityNone {
		t.Fatalf("service defaults missing: type %q clusterIP %q protocol %q affinity %q",
			created.Spec.Type, created.Spec.ClusterIP, created.Spec.Ports[0].Protocol, created.Spec.SessionAffinity)
	}
	got, err := c.Get(ctx, "web-service", metav1.GetOptions{})
	must(t, err, "get")
	got.Spec.ClusterIP = "10.43.250.250"
	got.Spec.ClusterIPs = []string{"10.43.250.250"}
	_, err = c.Update(ctx, got, metav1.UpdateOptions{})
	wantCode(t, err, 422, "changing clusterIP (immutable)")
	got, err = c.Get(ctx, "web-service", metav1.GetOptions{})
	must(t, err, "get")
	if got.Spec.ClusterIP != created.Spec.ClusterIP {
		t.Fatalf("clusterIP changed by a rejected update: %s → %s", created.Spec.ClusterIP, got.Spec.ClusterIP)
	}
	got.Spec.Ports[0].Port = 81
	upd, err := c.Update(ctx, got, metav1.UpdateOptions{})
	must(t, err, "update port")
	if upd.Spec.Ports[0].Port != 81 || upd.Spec.ClusterIP != created.Spec.ClusterIP {
		t.Fatalf("update: port %d clusterIP %s", upd.Spec.Ports[0].Port, upd.Spec.ClusterIP)
	}
	must(t, c.Delete(ctx, "web-service", metav1.DeleteOptions{}), "delete")
	_, err = c.Get(ctx, "web-service", metav1.GetOptions{})
	wantCode(t, err, 404, "get after delete")
}

func webDeployment(ns, name string, replicas int32) *appsv1.Deployment {
	labels := map[string]string{"app": "web"}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: labels},
		Spec: appsv1.DeploymentSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{
					{Name: "nginx", Image: "nginx:1.25", Ports: []corev1.ContainerPort{{ContainerPort: 80}}},
				}},
			},
		},
	}
}

func testCRUDDeployment(t *testing.T, s *testutil.Server) {
	ctx, cs := ctxT(t), s.Clientset
	ns := newNamespace(t, cs)
	c := cs.AppsV1().Deployments(ns)
	created, err := c.Create(ctx, webDeployment(ns, "web", 3), metav1.CreateOptions{})
	must(t, err, "create")
	if created.Generation != 1 || created.Spec.Strategy.Type != appsv1.RollingUpdateDeploymentStrategyType ||
		created.Spec.RevisionHistoryLimit == nil || created.Spec.Template.Spec.RestartPolicy != corev1.RestartPolicyAlways {
		t.Fatalf("deployment defaults: generation %d strategy %q revisionHistoryLimit %v restartPolicy %q",
			created.Generation, created.Spec.Strategy.Type, created.Spec.RevisionHistoryLimit, created.Spec.Template.Spec.RestartPolicy)
	}
	got, err := c.Get(ctx, "web", metav1.GetOptions{})
	must(t, err, "get")
	got.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": "other"}}
	got.Spec.Template.Labels = map[string]string{"app": "other"}
	_, err = c.Update(ctx, got, metav1.UpdateOptions{})
	wantCode(t, err, 422, "changing the selector (immutable in apps/v1)")
	bad := webDeployment(ns, "bad", 1)
	bad.Spec.Template.Labels = map[string]string{"app": "nomatch"}
	_, err = c.Create(ctx, bad, metav1.CreateOptions{})
	wantCode(t, err, 422, "selector not matching template labels")
	list, err := c.List(ctx, metav1.ListOptions{})
	must(t, err, "list")
	if len(list.Items) != 1 {
		t.Fatalf("list: %d deployments, want 1", len(list.Items))
	}
	must(t, c.Delete(ctx, "web", metav1.DeleteOptions{}), "delete")
	_, err = c.Get(ctx, "web", metav1.GetOptions{})
	wantCode(t, err, 404, "get after delete")
}

func testCRUDPod(t *testing.T, s *testutil.Server) {
	ctx, cs := ctxT(t), s.Clientset
	ns := newNamespace(t, cs)
	c := cs.CoreV1().Pods(ns)
	// Another scheduler's pod: orch's scheduler would otherwise write the
	// pod's PodScheduled condition (no nodes here) between the Get and the
	// Update below, turning the update checks into 409 conflicts.
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "p1", Labels: map[string]string{"app": "web"}},
		Spec: corev1.PodSpec{SchedulerName: "not-orch",
			Containers: []corev1.Container{{Name: "c", Image: "nginx:1.25"}}},
	}
	created, err := c.Create(ctx, pod, metav1.CreateOptions{})
	must(t, err, "create")
	if created.Status.Phase != corev1.PodPending && created.Status.Phase != "" {
		t.Fatalf("new pod phase %q, want Pending", created.Status.Phase)
	}
	if created.Spec.RestartPolicy != corev1.RestartPolicyAlways || created.Spec.DNSPolicy != corev1.DNSClusterFirst ||
		created.Spec.Containers[0].ImagePullPolicy != corev1.PullIfNotPresent {
		t.Fatalf("pod defaults: restartPolicy %q dnsPolicy %q pullPolicy %q", created.Spec.RestartPolicy,
			created.Spec.DNSPolicy, created.Spec.Containers[0].ImagePullPolicy)
	}
	got, err := c.Get(ctx, "p1", metav1.GetOptions{})
	must(t, err, "get")
	got.Spec.Containers[0].Image = "nginx:1.26"
	_, err = c.Update(ctx, got, metav1.UpdateOptions{})
	must(t, err, "update image (allowed)")
	got, err = c.Get(ctx, "p1", metav1.GetOptions{})
	must(t, err, "get")
	got.Spec.Containers[0].Name = "renamed"
	_, err = c.Update(ctx, got, metav1.UpdateOptions{})
	wantCode(t, err, 422, "renaming a container (pod spec is immutable)")
	must(t, c.Delete(ctx, "p1", metav1.DeleteOptions{GracePeriodSeconds: new(int64)}), "delete")
	_, err = c.Get(ctx, "p1", metav1.GetOptions{})
	wantCode(t, err, 404, "get after delete with grace 0")
}
