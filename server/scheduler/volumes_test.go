package scheduler

import (
	"errors"
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

func claim(name, class, volume string) *corev1.PersistentVolumeClaim {
	return &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name},
		Spec: corev1.PersistentVolumeClaimSpec{StorageClassName: ptr.To(class), VolumeName: volume,
			AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}}},
	}
}

func localPV(name, class, node string) *corev1.PersistentVolume {
	return &corev1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.PersistentVolumeSpec{StorageClassName: class,
			Capacity:    corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("2Gi")},
			AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			NodeAffinity: &corev1.VolumeNodeAffinity{Required: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{
				expr(LabelHostname, corev1.NodeSelectorOpIn, node)}}}},
		Status: corev1.PersistentVolumeStatus{Phase: corev1.VolumeAvailable},
	}
}

func class(name, provisioner string, mode storagev1.VolumeBindingMode) *storagev1.StorageClass {
	return &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: name}, Provisioner: provisioner, VolumeBindingMode: ptr.To(mode)}
}

func storageOf(objs ...any) *Storage {
	st := &Storage{PVCs: map[string]*corev1.PersistentVolumeClaim{}, PVs: map[string]*corev1.PersistentVolume{},
		Classes: map[string]*storagev1.StorageClass{}}
	for _, o := range objs {
		switch o := o.(type) {
		case *corev1.PersistentVolumeClaim:
			st.PVCs[o.Namespace+"/"+o.Name] = o
		case *corev1.PersistentVolume:
			st.PVs[o.Name] = o
		case *storagev1.StorageClass:
			st.Classes[o.Name] = o
		}
	}
	return st
}

func TestVolumeBinding(t *testing.T) {
	wffc, imm := storagev1.VolumeBindingWaitForFirstConsumer, storagev1.VolumeBindingImmediate
	localPath := class("local-path", "orch.io/local-path", wffc)
	static := class("static", NoProvisioner, wffc)
	tests := []struct {
		name    string
		storage *Storage
		want    string // error message, "" = schedules
		node    string
		claims  []string
	}{
		{"missing claim", storageOf(), `0/2 nodes are available: persistentvolumeclaim "data" not found. ` +
			"preemption: 0/2 nodes are available: 2 " + ReasonPreemptionNotHelpful + ".", "", nil},
		{"unbound immediate claim", storageOf(claim("data", "fast", ""), class("fast", "x", imm)),
			"0/2 nodes are available: " + MsgUnboundImmediate + ". preemption: 0/2 nodes are available: 2 " + ReasonPreemptionNotHelpful + ".", "", nil},
		{"claim without a class is immediate", storageOf(claim("data", "gone", "")),
			"0/2 nodes are available: " + MsgUnboundImmediate + ". preemption: 0/2 nodes are available: 2 " + ReasonPreemptionNotHelpful + ".", "", nil},
		{"bound claim follows the PV's node", storageOf(claim("data", "local-path", "pv1"), localPV("pv1", "local-path", "node-00001"), localPath),
			"", "node-00001", nil},
		{"bound claim to a missing PV", storageOf(claim("data", "local-path", "pv1"), localPath),
			"0/2 nodes are available: 2 " + ReasonPVNotExist + ". preemption: 0/2 nodes are available: 2 " + ReasonPreemptionNotHelpful + ".", "", nil},
		{"bound PV on an unknown node", storageOf(claim("data", "local-path", "pv1"), localPV("pv1", "local-path", "elsewhere"), localPath),
			"0/2 nodes are available: 2 " + ReasonVolumeNodeConflict + ". preemption: 0/2 nodes are available: 2 " + ReasonPreemptionNotHelpful + ".", "", nil},
		{"WaitForFirstConsumer with a provisioner fits anywhere", storageOf(claim("data", "local-path", ""), localPath),
			"", "node-00000", []string{"default/data"}},
		{"WaitForFirstConsumer static PV picks its node", storageOf(claim("data", "static", ""), static, localPV("pv1", "static", "node-00001")),
			"", "node-00001", []string{"default/data"}},
		{"WaitForFirstConsumer static without a PV", storageOf(claim("data", "static", ""), static),
			"0/2 nodes are available: 2 " + ReasonVolumeBindConflict + ". preemption: 0/2 nodes are available: 2 " + ReasonPreemptionNotHelpful + ".", "", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			snap := NewSnapshot(fakeNodes(2, "4", "8Gi"), nil)
			snap.Storage = tc.storage
			pod := makePod("p", "", "", withClaim("data"))
			res, err := Schedule(pod, snap, Config{})
			var fe *FitError
			if errors.As(err, &fe) {
				Preempt(pod, snap, fe, nil)
			}
			got := ""
			if err != nil {
				got = err.Error()
			}
			if got != tc.want || res.Node != tc.node || !reflect.DeepEqual(res.ClaimsToSelect, tc.claims) {
				t.Fatalf("got %q on %q claims %v\nwant %q on %q claims %v", got, res.Node, res.ClaimsToSelect, tc.want, tc.node, tc.claims)
			}
		})
	}
}
