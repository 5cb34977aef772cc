package integration

import (
	"fmt"
	"net/netip"
	"sync"
	"testing"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"

	"github.com/orch/orch/test/testutil"
)

func init() {
	register("DefaultNamespacesAndKubernetesService", testDefaults)
	register("ServiceAllocationsUnique", testServiceAllocations)
	register("GenerationBumpsOnSpecOnly", testGeneration)
	register("StatusSubresource", testStatusSubresource)
	register("ScaleSubresource", testScale)
	register("DeletePreconditions", testDeletePreconditions)
	register("Finalizers", testFinalizers)
	register("DeleteCollection", testDeleteCollection)
}

func testDefaults(t *testing.T, s *testutil.Server) {
	ctx, cs := ctxT(t), s.Clientset
	for _, ns := range []string{"default", "kube-system", "kube-public", "kube-node-lease"} {
		n, err := cs.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
		must(t, err, "get namespace %s", ns)
		if n.Status.Phase != corev1.NamespaceActive {
			t.Errorf("namespace %s phase %q, want Active", ns, n.Status.Phase)
		}
	}
	svc, err := cs.CoreV1().Services("default").Get(ctx, "kubernetes", metav1.GetOptions{})
	must(t, err, "get default/kubernetes service")
	if svc.Spec.ClusterIP != "10.43.0.1" {
		t.Errorf("kubernetes service clusterIP %q, want 10.43.0.1", svc.Spec.ClusterIP)
	}
	if len(svc.Spec.Ports) != 1 || svc.Spec.Ports[0].Port != 443 || svc.Spec.Ports[0].Name != "https" {
		t.Errorf("kubernetes service ports %+v, want https/443", svc.Spec.Ports)
	}
	_, err = cs.CoreV1().ServiceAccounts("default").Get(ctx, "default", metav1.GetOptions{})
	if err != nil {
		t.Logf("note: default/default ServiceAccount not present (%v)", err)
	}
}

func testServiceAllocations(t *testing.T, s *testutil.Server) {
	ctx, cs := ctxT(t), s.Clientset
	ns := newNamespace(t, cs)
	c := cs.CoreV1().Services(ns)
	const n = 40
	var mu sync.Mutex
	var created []*corev1.Service
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			svc := webService(ns, fmt.Sprintf("svc-%d", i))
			if i%2 == 0 {
				svc.Spec.Type = corev1.ServiceTypeNodePort
			}
			out, err := c.Create(ctx, svc, metav1.CreateOptions{})
			if err != nil {
				errs <- fmt.Errorf("create svc-%d: %w", i, err)
				return
			}
			mu.Lock()
			created = append(created, out)
			mu.Unlock()
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	cidr := netip.MustParsePrefix("10.43.0.0/16")
	ips := map[string]string{"10.43.0.1": "default/kubernetes"}
	ports := map[int32]string{}
	for _, svc := range created {
		ip, err := netip.ParseAddr(svc.Spec.ClusterIP)
		if err != nil || !cidr.Contains(ip) {
			t.Errorf("%s: clusterIP %q not in %s", svc.Name, svc.Spec.ClusterIP, cidr)
		}
		if other, dup := ips[svc.Spec.ClusterIP]; dup {
			t.Errorf("clusterIP %s given to both %s and %s", svc.Spec.ClusterIP, other, svc.Name)
		}
		ips[svc.Spec.ClusterIP] = svc.Name
		if svc.Spec.Type != corev1.ServiceTypeNodePort {
			continue
		}
		np := svc.Spec.Ports[0].NodePort
		if np < 30000 || np > 32767 {
			t.Errorf("%s: nodePort %d outside 30000-32767", svc.Name, np)
		}
		if other, dup := ports[np]; dup {
			t.Errorf("nodePort %d given to both %s and %s", np, other, svc.Name)
		}
		ports[np] = svc.Name
	}
	if len(created) == 0 {
		t.Fatal("no service created")
	}
	// Asking for a taken IP or port fails with 422 and stores nothing.
	taken := webService(ns, "dup-ip")
	taken.Spec.ClusterIP = created[0].Spec.ClusterIP
	_, err := c.Create(ctx, taken, metav1.CreateOptions{})
	wantCode(t, err, 422, "service with an allocated clusterIP")
	out := webService(ns, "out-of-range")
	out.Spec.ClusterIP = "10.99.0.5"
	_, err = c.Create(ctx, out, metav1.CreateOptions{})
	wantCode(t, err, 422, "service with a clusterIP outside the service CIDR")
	for _, svc := range created {
		if svc.Spec.Type == corev1.ServiceTypeNodePort {
			dup := webService(ns, "dup-port")
			dup.Spec.Type = corev1.ServiceTypeNodePort
			dup.Spec.Ports[0].NodePort = svc.Spec.Ports[0].NodePort
			_, err = c.Create(ctx, dup, metav1.CreateOptions{})
			wantCode(t, err, 422, "service with an allocated nodePort")
			break
		}
	}
	// A released IP can be taken again.
	must(t, c.Delete(ctx, created[0].Name, metav1.DeleteOptions{}), "delete")
	again := webService(ns, "reuse-ip")
	again.Spec.ClusterIP = created[0].Spec.ClusterIP
	_, err = c.Create(ctx, again, metav1.CreateOptions{})
	must(t, err, "re-use the clusterIP of a deleted service")
}

func testGeneration(t *testing.T, s *testutil.Server) {
	ctx, cs := ctxT(t), s.Clientset
	ns := newNamespace(t, cs)
	c := cs.AppsV1().Deployments(ns)
	d, err := c.Create(ctx, webDeployment(ns, "g", 1), metav1.CreateOptions{})
	must(t, err, "create")
	if d.Generation != 1 {
		t.Fatalf("generation on create %d, want 1", d.Generation)
	}
	d.Labels["extra"] = "x"
	d, err = c.Update(ctx, d, metav1.UpdateOptions{})
	must(t, err, "label update")
	if d.Generation != 1 {
		t.Errorf("generation after a labels-only update %d, want 1", d.Generation)
	}
	// Upstream bumps a Deployment's generation on annotation changes too
	// (annotations are copied to its ReplicaSets).
	d.Annotations = map[string]string{"note": "y"}
	d, err = c.Update(ctx, d, metav1.UpdateOptions{})
	must(t, err, "annotation update")
	if d.Generation != 2 {
		t.Errorf("deployment generation after an annotation update %d, want 2 (upstream rule)", d.Generation)
	}
	d.Status.ObservedGeneration = 2
	d.Status.Replicas = 1
	d, err = c.UpdateStatus(ctx, d, metav1.UpdateOptions{})
	must(t, err, "status update")
	if d.Generation != 2 {
		t.Errorf("generation after a status update %d, want 2", d.Generation)
	}
	d.Spec.Template.Spec.Containers[0].Image = "nginx:1.26"
	d, err = c.Update(ctx, d, metav1.UpdateOptions{})
	must(t, err, "spec update")
	if d.Generation != 3 {
		t.Errorf("generation after a spec update %d, want 3", d.Generation)
	}
	d, err = c.Update(ctx, d, metav1.UpdateOptions{})
	must(t, err, "no-op update")
	if d.Generation != 3 {
		t.Errorf("generation after a no-op update %d, want 3", d.Generation)
	}
	// ConfigMaps have no spec: generation is never bumped.
	cmc := cs.CoreV1().ConfigMaps(ns)
	o, err := cmc.Create(ctx, cm(ns, "gen", map[string]string{"a": "1"}), metav1.CreateOptions{})
	must(t, err, "create configmap")
	o.Data["a"] = "2"
	o, err = cmc.Update(ctx, o, metav1.UpdateOptions{})
	must(t, err, "update configmap")
	if o.Generation > 1 {
		t.Errorf("configmap generation %d after a data update, want unchanged", o.Generation)
	}
}

func testStatusSubresource(t *testing.T, s *testutil.Server) {
	ctx, cs := ctxT(t), s.Clientset
	ns := newNamespace(t, cs)
	c := cs.AppsV1().Deployments(ns)
	d := webDeployment(ns, "st", 2)
	d.Status.Replicas = 99 // create must drop client-set status
	d, err := c.Create(ctx, d, metav1.CreateOptions{})
	must(t, err, "create")
	if d.Status.Replicas != 0 {
		t.Errorf("create kept client-set status.replicas=%d", d.Status.Replicas)
	}
	// Status update cannot change the spec.
	d.Status.Replicas = 2
	d.Status.ReadyReplicas = 1
	*d.Spec.Replicas = 7
	d, err = c.UpdateStatus(ctx, d, metav1.UpdateOptions{})
	must(t, err, "update status")
	if *d.Spec.Replicas != 2 || d.Status.Replicas != 2 || d.Status.ReadyReplicas != 1 {
		t.Fatalf("after status update: spec.replicas %d (want 2 kept), status %d/%d (want 2/1)",
			*d.Spec.Replicas, d.Status.Replicas, d.Status.ReadyReplicas)
	}
	// A main-resource update cannot change the status.
	d.Status.Replicas = 50
	*d.Spec.Replicas = 3
	d, err = c.Update(ctx, d, metav1.UpdateOptions{})
	must(t, err, "update")
	if *d.Spec.Replicas != 3 || d.Status.Replicas != 2 {
		t.Fatalf("after main update: spec.replicas %d (want 3), status.replicas %d (want 2 kept)", *d.Spec.Replicas, d.Status.Replicas)
	}
	// Status patches go through the subresource too.
	d, err = c.Patch(ctx, "st", types.MergePatchType, []byte(`{"status":{"availableReplicas":2},"spec":{"replicas":9}}`), metav1.PatchOptions{}, "status")
	must(t, err, "patch status")
	if d.Status.AvailableReplicas != 2 || *d.Spec.Replicas != 3 {
		t.Fatalf("after status patch: available %d (want 2), spec.replicas %d (want 3)", d.Status.AvailableReplicas, *d.Spec.Replicas)
	}
}

func testScale(t *testing.T, s *testutil.Server) {
	ctx, cs := ctxT(t), s.Clientset
	ns := newNamespace(t, cs)
	c := cs.AppsV1().Deployments(ns)
	_, err := c.Create(ctx, webDeployment(ns, "sc", 3), metav1.CreateOptions{})
	must(t, err, "create")
	sc, err := c.GetScale(ctx, "sc", metav1.GetOptions{})
	must(t, err, "get scale")
	if sc.Spec.Replicas != 3 || sc.Status.Selector != "app=web" || sc.Name != "sc" {
		t.Fatalf("scale = %+v, want spec.replicas 3 selector app=web", sc)
	}
	// The Deployment controller writes status meanwhile: a scale update
	// carrying an older resourceVersion conflicts, as upstream; retry.
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cur, err := c.GetScale(ctx, "sc", metav1.GetOptions{})
		if err != nil {
			return err
		}
		cur.Spec.Replicas = 5
		sc, err = c.UpdateScale(ctx, "sc", cur, metav1.UpdateOptions{})
		return err
	})
	must(t, err, "update scale")
	if sc.Spec.Replicas != 5 {
		t.Fatalf("scale after update %d, want 5", sc.Spec.Replicas)
	}
	d, err := c.Get(ctx, "sc", metav1.GetOptions{})
	must(t, err, "get")
	if *d.Spec.Replicas != 5 || d.Generation != 2 {
		t.Fatalf("deployment after scale: replicas %d generation %d, want 5 and 2", *d.Spec.Replicas, d.Generation)
	}
	_, err = c.UpdateScale(ctx, "sc", &autoscalingv1.Scale{
		ObjectMeta: metav1.ObjectMeta{Name: "sc", Namespace: ns},
		Spec:       autoscalingv1.ScaleSpec{Replicas: -1},
	}, metav1.UpdateOptions{})
	wantCode(t, err, 422, "negative scale")
	_, err = c.Patch(ctx, "sc", types.MergePatchType, []byte(`{"spec":{"replicas":1}}`), metav1.PatchOptions{}, "scale")
	must(t, err, "patch scale")
	d, err = c.Get(ctx, "sc", metav1.GetOptions{})
	must(t, err, "get")
	if *d.Spec.Replicas != 1 {
		t.Fatalf("replicas after scale patch %d, want 1", *d.Spec.Replicas)
	}
	_, err = c.GetScale(ctx, "missing", metav1.GetOptions{})
	wantCode(t, err, 404, "scale of a missing deployment")
}

func testDeletePreconditions(t *testing.T, s *testutil.Server) {
	ctx, cs := ctxT(t), s.Clientset
	ns := newNamespace(t, cs)
	c := cs.CoreV1().ConfigMaps(ns)
	o, err := c.Create(ctx, cm(ns, "p", nil), metav1.CreateOptions{})
	must(t, err, "create")
	wrongUID := types.UID("00000000-0000-0000-0000-000000000000")
	err = c.Delete(ctx, "p", metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &wrongUID}})
	wantCode(t, err, 409, "delete with a wrong uid precondition")
	stale := "1"
	err = c.Delete(ctx, "p", metav1.DeleteOptions{Preconditions: &metav1.Preconditions{ResourceVersion: &stale}})
	wantCode(t, err, 409, "delete with a stale resourceVersion precondition")
	if _, err := c.Get(ctx, "p", metav1.GetOptions{}); err != nil {
		t.Fatalf("failed preconditions deleted the object: %v", err)
	}
	err = c.Delete(ctx, "p", metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &o.UID, ResourceVersion: &o.ResourceVersion}})
	must(t, err, "delete with matching preconditions")
	_, err = c.Get(ctx, "p", metav1.GetOptions{})
	wantCode(t, err, 404, "get after delete")
}

func testFinalizers(t *testing.T, s *testutil.Server) {
	ctx, cs := ctxT(t), s.Clientset
	ns := newNamespace(t, cs)
	c := cs.CoreV1().ConfigMaps(ns)
	o := cm(ns, "f", map[string]string{"k": "v"})
	o.Finalizers = []string{"orch.test/a", "orch.test/b"}
	_, err := c.Create(ctx, o, metav1.CreateOptions{})
	must(t, err, "create")
	must(t, c.Delete(ctx, "f", metav1.DeleteOptions{}), "delete")
	got, err := c.Get(ctx, "f", metav1.GetOptions{})
	must(t, err, "get after delete (finalizers hold it)")
	if got.DeletionTimestamp == nil {
		t.Fatalf("deleted object with finalizers has no deletionTimestamp")
	}
	got.Data["k"] = "changed"
	got.Finalizers = []string{"orch.test/a", "orch.test/b", "orch.test/c"}
	_, err = c.Update(ctx, got, metav1.UpdateOptions{})
	if err == nil {
		t.Errorf("adding a finalizer to an object being deleted succeeded (upstream: 422)")
	}
	got, err = c.Get(ctx, "f", metav1.GetOptions{})
	must(t, err, "get")
	got.Finalizers = []string{"orch.test/b"}
	got, err = c.Update(ctx, got, metav1.UpdateOptions{})
	must(t, err, "remove one finalizer")
	if got.DeletionTimestamp == nil {
		t.Fatalf("deletionTimestamp cleared by a finalizer update")
	}
	got.Finalizers = nil
	_, err = c.Update(ctx, got, metav1.UpdateOptions{})
	must(t, err, "remove last finalizer")
	_, err = c.Get(ctx, "f", metav1.GetOptions{})
	if !apierrors.IsNotFound(err) {
		t.Fatalf("object still present after its last finalizer was removed (err %v)", err)
	}
}

func testDeleteCollection(t *testing.T, s *testutil.Server) {
	ctx, cs := ctxT(t), s.Clientset
	ns := newNamespace(t, cs)
	c := cs.CoreV1().ConfigMaps(ns)
	for i := range 12 {
		o := cm(ns, fmt.Sprintf("dc-%d", i), nil)
		o.Labels = map[string]string{"batch": fmt.Sprint(i % 2)}
		_, err := c.Create(ctx, o, metav1.CreateOptions{})
		must(t, err, "create")
	}
	must(t, c.DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{LabelSelector: "batch=0"}), "deletecollection")
	l, err := c.List(ctx, metav1.ListOptions{})
	must(t, err, "list")
	if len(l.Items) != 6 {
		t.Fatalf("after deletecollection batch=0: %v, want the 6 of batch=1", cmNames(l.Items))
	}
	for _, i := range l.Items {
		if i.Labels["batch"] != "1" {
			t.Fatalf("deletecollection left %s (batch=%s)", i.Name, i.Labels["batch"])
		}
	}
	must(t, c.DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{}), "deletecollection all")
	l, err = c.List(ctx, metav1.ListOptions{})
	must(t, err, "list")
	if len(l.Items) != 0 {
		t.Fatalf("after deletecollection of all: %v left", cmNames(l.Items))
	}
}
