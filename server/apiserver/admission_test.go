package apiserver_test

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/orch/orch/server/apiserver/apiservertest"
)

func TestDefaultStorageClassAdmission(t *testing.T) {
	api, rc := apiservertest.Start(t)
	ctx := context.Background()
	if err := api.Bootstrap(ctx); err != nil {
		t.Fatal(err)
	}
	cs := kubernetes.NewForConfigOrDie(rc)
	claim := func(name string) *corev1.PersistentVolumeClaim {
		c, err := cs.CoreV1().PersistentVolumeClaims("default").Create(ctx, &corev1.PersistentVolumeClaim{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: corev1.PersistentVolumeClaimSpec{AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
				Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}}},
		}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	if c := claim("before"); c.Spec.StorageClassName != nil {
		t.Fatalf("class set without a default class: %q", *c.Spec.StorageClassName)
	}
	for _, sc := range []*storagev1.StorageClass{
		{ObjectMeta: metav1.ObjectMeta{Name: "slow"}, Provisioner: "x"},
		{ObjectMeta: metav1.ObjectMeta{Name: "local-path", Annotations: map[string]string{"storageclass.kubernetes.io/is-default-class": "true"}}, Provisioner: "x"},
	} {
		if _, err := cs.StorageV1().StorageClasses().Create(ctx, sc, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if c := claim("after"); c.Spec.StorageClassName == nil || *c.Spec.StorageClassName != "local-path" {
		t.Fatalf("default class not applied: %v", c.Spec.StorageClassName)
	}
}

func TestPriorityAdmission(t *testing.T) {
	api, rc := apiservertest.Start(t)
	ctx := context.Background()
	if err := api.Bootstrap(ctx); err != nil {
		t.Fatal(err)
	}
	cs := kubernetes.NewForConfigOrDie(rc)
	never := corev1.PreemptNever
	for _, pc := range []*schedulingv1.PriorityClass{
		{ObjectMeta: metav1.ObjectMeta{Name: "high"}, Value: 1000},
		{ObjectMeta: metav1.ObjectMeta{Name: "batch"}, Value: 10, GlobalDefault: true, PreemptionPolicy: &never},
	} {
		if _, err := cs.SchedulingV1().PriorityClasses().Create(ctx, pc, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	pod := func(name, class string) (*corev1.Pod, error) {
		return cs.CoreV1().Pods("default").Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: corev1.PodSpec{PriorityClassName: class, Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}}, metav1.CreateOptions{})
	}
	p, err := pod("a", "high")
	if err != nil || *p.Spec.Priority != 1000 || *p.Spec.PreemptionPolicy != corev1.PreemptLowerPriority {
		t.Fatalf("high: %v %+v", err, p)
	}
	p, err = pod("b", "")
	if err != nil || *p.Spec.Priority != 10 || p.Spec.PriorityClassName != "batch" || *p.Spec.PreemptionPolicy != corev1.PreemptNever {
		t.Fatalf("default class: %v %+v", err, p)
	}
	p, err = pod("c", "system-node-critical")
	if err != nil || *p.Spec.Priority != 2000001000 {
		t.Fatalf("builtin: %v %+v", err, p)
	}
	if _, err := pod("d", "nope"); !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "no PriorityClass with name nope was found") {
		t.Fatalf("unknown class: %v", err)
	}
}
