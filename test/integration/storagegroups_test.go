package integration

import (
	"strings"
	"testing"

	storagev1 "k8s.io/api/storage/v1"
	svmv1 "k8s.io/api/storagemigration/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/orch/orch/test/testutil"
)

func init() {
	register("VolumeAttributesClassAndCSIStorageCapacity", testStorageClassesOfCSI)
	register("StorageVersionMigrationAPI", testStorageVersionMigrationAPI)
}

// testStorageClassesOfCSI: VolumeAttributesClass (driver and parameters
// immutable) and CSIStorageCapacity (namespaced, listed across namespaces,
// topology and class immutable), with their columns.
func testStorageClassesOfCSI(t *testing.T, s *testutil.Server) {
	ctx := ctxT(t)
	ns := newNamespace(t, s.Clientset)
	vacs := s.Clientset.StorageV1().VolumeAttributesClasses()
	_, err := vacs.Create(ctx, &storagev1.VolumeAttributesClass{ObjectMeta: metav1.ObjectMeta{Name: "it-bad-" + ns}, DriverName: "d"}, metav1.CreateOptions{})
	wantField(t, err, "parameters")
	vac, err := vacs.Create(ctx, &storagev1.VolumeAttributesClass{ObjectMeta: metav1.ObjectMeta{Name: "it-" + ns},
		DriverName: "e2e-fake-csi-driver", Parameters: map[string]string{"iops": "3000"}}, metav1.CreateOptions{})
	must(t, err, "create VolumeAttributesClass")
	t.Cleanup(func() { _ = vacs.Delete(ctxT(t), vac.Name, metav1.DeleteOptions{}) })
	_, err = vacs.Patch(ctx, vac.Name, types.StrategicMergePatchType, []byte(`{"parameters":{"iops":"5000"}}`), metav1.PatchOptions{})
	wantField(t, err, "parameters")
	_, err = vacs.Patch(ctx, vac.Name, types.StrategicMergePatchType, []byte(`{"metadata":{"labels":{"tier":"gold"}}}`), metav1.PatchOptions{})
	must(t, err, "label VolumeAttributesClass")
	table, err := s.Clientset.CoreV1().RESTClient().Get().AbsPath("/apis/storage.k8s.io/v1/volumeattributesclasses/"+vac.Name).
		SetHeader("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io").DoRaw(ctx)
	must(t, err, "table")
	if !strings.Contains(string(table), `"DriverName"`) || !strings.Contains(string(table), `"e2e-fake-csi-driver"`) {
		t.Fatalf("table: %s", table)
	}

	caps := s.Clientset.StorageV1().CSIStorageCapacities(ns)
	c, err := caps.Create(ctx, &storagev1.CSIStorageCapacity{ObjectMeta: metav1.ObjectMeta{Name: "fast-a", Labels: map[string]string{"it": ns}},
		StorageClassName: "fast", Capacity: ptrQuantity("10Gi"),
		NodeTopology: &metav1.LabelSelector{MatchLabels: map[string]string{"topology.kubernetes.io/zone": "a"}}}, metav1.CreateOptions{})
	must(t, err, "create CSIStorageCapacity")
	all, err := s.Clientset.StorageV1().CSIStorageCapacities("").List(ctx, metav1.ListOptions{LabelSelector: "it=" + ns})
	must(t, err, "list across namespaces")
	if len(all.Items) != 1 || all.Items[0].Namespace != ns {
		t.Fatalf("listed %+v", all.Items)
	}
	c.StorageClassName = "slow"
	_, err = caps.Update(ctx, c, metav1.UpdateOptions{})
	wantField(t, err, "storageClassName")
	_, err = caps.Create(ctx, &storagev1.CSIStorageCapacity{ObjectMeta: metav1.ObjectMeta{Name: "neg"}, StorageClassName: "fast",
		Capacity: ptrQuantity("-1")}, metav1.CreateOptions{})
	wantField(t, err, "capacity")
}

func ptrQuantity(s string) *resource.Quantity {
	q := resource.MustParse(s)
	return &q
}

// testStorageVersionMigrationAPI: the API alone (this server runs no
// migration controller): status cleared on create, spec immutable, the
// status subresource with its rules.
func testStorageVersionMigrationAPI(t *testing.T, s *testutil.Server) {
	ctx := ctxT(t)
	ns := newNamespace(t, s.Clientset)
	svms := s.Clientset.StoragemigrationV1().StorageVersionMigrations()
	_, err := svms.Create(ctx, &svmv1.StorageVersionMigration{ObjectMeta: metav1.ObjectMeta{Name: "it-bad-" + ns},
		Spec: svmv1.StorageVersionMigrationSpec{Resource: metav1.GroupResource{Group: "Bad_Group", Resource: "x"}}}, metav1.CreateOptions{})
	wantField(t, err, "spec.resource.group")
	in := &svmv1.StorageVersionMigration{ObjectMeta: metav1.ObjectMeta{Name: "it-" + ns},
		Spec:   svmv1.StorageVersionMigrationSpec{Resource: metav1.GroupResource{Resource: "foo"}},
		Status: svmv1.StorageVersionMigrationStatus{ResourceVersion: "5"}}
	svm, err := svms.Create(ctx, in, metav1.CreateOptions{})
	must(t, err, "create")
	t.Cleanup(func() { _ = svms.Delete(ctxT(t), svm.Name, metav1.DeleteOptions{}) })
	if svm.Status.ResourceVersion != "" {
		t.Fatalf("create kept status %+v", svm.Status)
	}
	svm.Spec.Resource.Resource = "bar"
	_, err = svms.Update(ctx, svm, metav1.UpdateOptions{})
	wantField(t, err, "spec")
	done := metav1.Condition{Type: string(svmv1.MigrationSucceeded), Status: metav1.ConditionTrue, Reason: "Test", LastTransitionTime: metav1.Now()}
	svm.Spec.Resource.Resource = "foo"
	svm.Status.Conditions = []metav1.Condition{done}
	svm, err = svms.UpdateStatus(ctx, svm, metav1.UpdateOptions{})
	must(t, err, "update status")
	svm.Status.Conditions[0].Status = metav1.ConditionFalse
	_, err = svms.UpdateStatus(ctx, svm, metav1.UpdateOptions{})
	wantField(t, err, "status.conditions")
	p, err := svms.Patch(ctx, svm.Name, types.ApplyPatchType, []byte(`{"apiVersion":"storagemigration.k8s.io/v1","kind":"StorageVersionMigration",`+
		`"metadata":{"name":"`+svm.Name+`"},"status":{"conditions":[{"type":"TestCondition","status":"True","reason":"TestReason",`+
		`"message":"m","lastTransitionTime":"2026-01-01T00:00:00Z"}]}}`), metav1.PatchOptions{FieldManager: "it", Force: ptr.To(true)}, "status")
	must(t, err, "apply status")
	if len(p.Status.Conditions) != 2 {
		t.Fatalf("applied status %+v", p.Status)
	}
}
