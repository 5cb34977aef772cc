package integration

import (
	"fmt"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	svmv1 "k8s.io/api/storagemigration/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/orch/orch/test/testutil"
)

// TestNewAPIControllers runs the controllers behind the newer APIs on a
// server of their own (the shared one runs without controller manager):
// StorageVersionMigrations rewrite custom resources into a new storage
// version and prune the CRD's storedVersions; ServiceCIDRs get their
// finalizer and Ready condition.
func TestNewAPIControllers(t *testing.T) {
	s := testutil.StartServer(t, testutil.Options{Quiet: true, ExtraArgs: []string{"--disable-agent"}})
	t.Run("StorageVersionMigration", func(t *testing.T) { testStorageVersionMigration(t, s) })
	t.Run("ServiceCIDR", func(t *testing.T) { testServiceCIDRController(t, s) })
	if t.Failed() {
		t.Logf("--- server output (tail) ---\n%s", s.Output())
	}
}

func migrationDone(t *testing.T, s *testutil.Server, name string) *svmv1.StorageVersionMigration {
	t.Helper()
	var svm *svmv1.StorageVersionMigration
	waitFor(t, "migration "+name, func() error {
		var err error
		svm, err = s.Clientset.StoragemigrationV1().StorageVersionMigrations().Get(ctxT(t), name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		c := svm.Status.Conditions
		if !meta.IsStatusConditionTrue(c, string(svmv1.MigrationSucceeded)) || !meta.IsStatusConditionFalse(c, string(svmv1.MigrationRunning)) {
			return fmt.Errorf("status %+v", svm.Status)
		}
		return nil
	})
	return svm
}

func newMigration(t *testing.T, s *testutil.Server, name, group, resource string) {
	t.Helper()
	svms := s.Clientset.StoragemigrationV1().StorageVersionMigrations()
	_, err := svms.Create(ctxT(t), &svmv1.StorageVersionMigration{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: svmv1.StorageVersionMigrationSpec{Resource: metav1.GroupResource{Group: group, Resource: resource}}}, metav1.CreateOptions{})
	must(t, err, "create migration %s", name)
	t.Cleanup(func() { _ = svms.Delete(ctxT(t), name, metav1.DeleteOptions{}) })
}

func testStorageVersionMigration(t *testing.T, s *testutil.Server) {
	ctx := ctxT(t)
	ext, err := apiextclient.NewForConfig(s.Config)
	must(t, err, "apiextensions client")
	dyn, err := dynamic.NewForConfig(s.Config)
	must(t, err, "dynamic client")
	group := "migrate.example.com"
	crd := widgetCRD(group)
	v2 := *crd.Spec.Versions[0].DeepCopy()
	v2.Name, v2.Storage = "v2", false
	crd.Spec.Versions = append(crd.Spec.Versions, v2)
	createEstablished(t, ext, crd)
	ns := newNamespace(t, s.Clientset)
	wi := dyn.Resource(schema.GroupVersionResource{Group: group, Version: "v1", Resource: "widgets"}).Namespace(ns)
	rvs := map[string]string{}
	for i := range 3 {
		name := fmt.Sprintf("w%d", i)
		waitFor(t, "create widget", func() error {
			w, err := wi.Create(ctx, widget(group, name, map[string]interface{}{"size": "small"}), metav1.CreateOptions{})
			if err == nil {
				rvs[name] = w.GetResourceVersion()
			}
			return err
		})
	}
	// v2 becomes the storage version: the widgets are still stored as v1.
	cur, err := ext.ApiextensionsV1().CustomResourceDefinitions().Get(ctx, crd.Name, metav1.GetOptions{})
	must(t, err, "get CRD")
	cur.Spec.Versions[0].Storage, cur.Spec.Versions[1].Storage = false, true
	cur, err = ext.ApiextensionsV1().CustomResourceDefinitions().Update(ctx, cur, metav1.UpdateOptions{})
	must(t, err, "switch the storage version")
	if !slices.Equal(cur.Status.StoredVersions, []string{"v1", "v2"}) {
		t.Fatalf("storedVersions after the switch: %v", cur.Status.StoredVersions)
	}
	newMigration(t, s, "it-widgets", group, "widgets")
	migrationDone(t, s, "it-widgets")
	for name, rv := range rvs {
		w, err := wi.Get(ctx, name, metav1.GetOptions{})
		must(t, err, "get %s", name)
		if w.GetResourceVersion() == rv {
			t.Errorf("widget %s was not rewritten (resourceVersion still %s)", name, rv)
		}
	}
	cur, err = ext.ApiextensionsV1().CustomResourceDefinitions().Get(ctx, crd.Name, metav1.GetOptions{})
	must(t, err, "get CRD")
	if !slices.Equal(cur.Status.StoredVersions, []string{"v2"}) || !crdCondition(cur, apiextensionsv1.StorageMigrating, "False", "MigrationSucceeded") {
		t.Fatalf("CRD after the migration: storedVersions %v conditions %+v", cur.Status.StoredVersions, cur.Status.Conditions)
	}
	// Built-in resources have one storage version: nothing is rewritten.
	c, err := s.Clientset.CoreV1().ConfigMaps(ns).Create(ctx, cm(ns, "same", map[string]string{"a": "b"}), metav1.CreateOptions{})
	must(t, err, "create configmap")
	newMigration(t, s, "it-configmaps", "", "configmaps")
	migrationDone(t, s, "it-configmaps")
	if got, err := s.Clientset.CoreV1().ConfigMaps(ns).Get(ctx, "same", metav1.GetOptions{}); err != nil || got.ResourceVersion != c.ResourceVersion {
		t.Fatalf("configmap after the migration: %v, resourceVersion %s, was %s", err, got.ResourceVersion, c.ResourceVersion)
	}
}

func crdCondition(crd *apiextensionsv1.CustomResourceDefinition, typ apiextensionsv1.CustomResourceDefinitionConditionType, status, reason string) bool {
	for _, c := range crd.Status.Conditions {
		if c.Type == typ {
			return string(c.Status) == status && c.Reason == reason
		}
	}
	return false
}

// testServiceCIDRController: a new ServiceCIDR is Ready with its
// finalizer and Services get addresses of it; deleting it waits for the
// Service holding an address only it contains.
func testServiceCIDRController(t *testing.T, s *testutil.Server) {
	ctx := ctxT(t)
	scs := s.Clientset.NetworkingV1().ServiceCIDRs()
	ns := newNamespace(t, s.Clientset)
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec: corev1.ServiceSpec{ClusterIP: "203.0.113.10", Ports: []corev1.ServicePort{{Port: 80}}}}
	_, err := s.Clientset.CoreV1().Services(ns).Create(ctx, svc, metav1.CreateOptions{})
	wantField(t, err, "spec.clusterIPs[0]")
	_, err = scs.Create(ctx, &networkingv1.ServiceCIDR{ObjectMeta: metav1.ObjectMeta{Name: "it-extra"},
		Spec: networkingv1.ServiceCIDRSpec{CIDRs: []string{"203.0.113.0/24"}}}, metav1.CreateOptions{})
	must(t, err, "create ServiceCIDR")
	ready := func(want metav1.ConditionStatus, reason string) func() error {
		return func() error {
			sc, err := scs.Get(ctx, "it-extra", metav1.GetOptions{})
			if err != nil {
				return err
			}
			c := meta.FindStatusCondition(sc.Status.Conditions, networkingv1.ServiceCIDRConditionReady)
			if c == nil || c.Status != want || c.Reason != reason || !slices.Contains(sc.Finalizers, "networking.k8s.io/service-cidr-finalizer") {
				return fmt.Errorf("ServiceCIDR %+v %+v", sc.Finalizers, sc.Status)
			}
			return nil
		}
	}
	waitFor(t, "Ready with the finalizer", ready(metav1.ConditionTrue, ""))
	_, err = s.Clientset.CoreV1().Services(ns).Create(ctx, svc, metav1.CreateOptions{})
	must(t, err, "create a Service with an address of the new ServiceCIDR")
	waitFor(t, "the IPAddress", func() error {
		_, err := s.Clientset.NetworkingV1().IPAddresses().Get(ctx, "203.0.113.10", metav1.GetOptions{})
		return err
	})
	must(t, scs.Delete(ctx, "it-extra", metav1.DeleteOptions{}), "delete ServiceCIDR")
	waitFor(t, "deletion held", ready(metav1.ConditionFalse, networkingv1.ServiceCIDRReasonTerminating))
	must(t, s.Clientset.CoreV1().Services(ns).Delete(ctx, "web", metav1.DeleteOptions{}), "delete Service")
	waitFor(t, "ServiceCIDR gone", func() error {
		if _, err := scs.Get(ctx, "it-extra", metav1.GetOptions{}); err == nil {
			return fmt.Errorf("still there")
		}
		return nil
	})
}
