package replication

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/orch/orch/server/controllers/kit/kittest"
	"github.com/orch/orch/server/controllers/replicaset"
)

func newRC(name string, replicas int32) *corev1.ReplicationController {
	l := map[string]string{"app": name}
	return &corev1.ReplicationController{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.ReplicationControllerSpec{Replicas: ptr.To(replicas), Selector: l,
			Template: &corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: l},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "img"}}}}}}
}

// start runs the RC manager (and the ReplicaSet controller beside it, as
// the server does) over a real API server with namespace ns.
func start(t *testing.T, setup func(context.Context, kubernetes.Interface)) kubernetes.Interface {
	client, _ := kittest.Run(t, New, kittest.QPS(1000), kittest.Also(replicaset.New),
		kittest.Setup(func(ctx context.Context, client kubernetes.Interface) {
			if _, err := client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "ns"}},
				metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			setup(ctx, client)
		}))
	return client
}

func owned(t *testing.T, client kubernetes.Interface, uid types.UID) []corev1.Pod {
	l, err := client.CoreV1().Pods("ns").List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var out []corev1.Pod
	for _, p := range l.Items {
		if ref := metav1.GetControllerOf(&p); ref != nil && ref.UID == uid {
			out = append(out, p)
		}
	}
	return out
}

// TestAdoptCreateReleaseStatus: an RC adopts the matching orphan and
// creates the rest with itself as controller (kind ReplicationController,
// apiVersion v1), releases and replaces a pod relabelled out of its
// selector, writes an RC status and records its events on the RC.
func TestAdoptCreateReleaseStatus(t *testing.T) {
	client := start(t, func(ctx context.Context, client kubernetes.Interface) {
		orphan := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "orphan", Namespace: "ns", Labels: map[string]string{"app": "web"}},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "img"}}}}
		if _, err := client.CoreV1().Pods("ns").Create(ctx, orphan, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	})
	ctx := t.Context()
	rcs := client.CoreV1().ReplicationControllers("ns")
	rc, err := rcs.Create(ctx, newRC("web", 2), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	kittest.Until(t, "2 pods owned", func() bool { return len(owned(t, client, rc.UID)) == 2 })
	for _, p := range owned(t, client, rc.UID) {
		ref := metav1.GetControllerOf(&p)
		if ref.Kind != "ReplicationController" || ref.APIVersion != "v1" || ref.Name != "web" || !ptr.Deref(ref.BlockOwnerDeletion, false) {
			t.Fatalf("pod %s controller %+v", p.Name, ref)
		}
		if p.Name != "orphan" && p.GenerateName != "web-" {
			t.Fatalf("created pod %s generateName %q", p.Name, p.GenerateName)
		}
	}
	kittest.Until(t, "status of 2", func() bool {
		got, err := rcs.Get(ctx, "web", metav1.GetOptions{})
		return err == nil && got.Status.Replicas == 2 && got.Status.FullyLabeledReplicas == 2 &&
			got.Status.ObservedGeneration == got.Generation
	})

	p, err := client.CoreV1().Pods("ns").Get(ctx, "orphan", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	p.Labels = map[string]string{"app": "other"}
	if _, err := client.CoreV1().Pods("ns").Update(ctx, p, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	kittest.Until(t, "release and replacement", func() bool {
		p, err := client.CoreV1().Pods("ns").Get(ctx, "orphan", metav1.GetOptions{})
		return err == nil && len(p.OwnerReferences) == 0 && len(owned(t, client, rc.UID)) == 2
	})
	kittest.Until(t, "SuccessfulCreate event on the RC", func() bool {
		evs, err := client.CoreV1().Events("ns").List(ctx, metav1.ListOptions{})
		if err != nil {
			return false
		}
		for _, e := range evs.Items {
			if e.Reason == "SuccessfulCreate" && e.InvolvedObject.Kind == "ReplicationController" &&
				e.InvolvedObject.UID == rc.UID && e.Source.Component == Component {
				return true
			}
		}
		return false
	})
}

// TestReplicaFailure: a refused pod creation (here a LimitRange maximum)
// sets ReplicaFailure/FailedCreate on the RC; scaling to what exists
// clears it.
func TestReplicaFailure(t *testing.T) {
	client := start(t, func(ctx context.Context, client kubernetes.Interface) {
		lr := &corev1.LimitRange{ObjectMeta: metav1.ObjectMeta{Name: "max", Namespace: "ns"},
			Spec: corev1.LimitRangeSpec{Limits: []corev1.LimitRangeItem{{Type: corev1.LimitTypeContainer,
				Max: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m")}}}}}
		if _, err := client.CoreV1().LimitRanges("ns").Create(ctx, lr, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	})
	ctx := t.Context()
	rcs := client.CoreV1().ReplicationControllers("ns")
	r := newRC("big", 2)
	r.Spec.Template.Spec.Containers[0].Resources.Limits = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}
	if _, err := rcs.Create(ctx, r, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	failure := func() (*corev1.ReplicationControllerCondition, *corev1.ReplicationController) {
		got, err := rcs.Get(ctx, "big", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for i, c := range got.Status.Conditions {
			if c.Type == corev1.ReplicationControllerReplicaFailure {
				return &got.Status.Conditions[i], got
			}
		}
		return nil, got
	}
	kittest.Eventually(t, 20*time.Second, "ReplicaFailure", func() (bool, string) {
		c, got := failure()
		return c != nil && c.Reason == "FailedCreate" && c.Status == corev1.ConditionTrue, fmt.Sprintf("%+v", got.Status)
	})
	kittest.Update(t, rcs, "big", func(r *corev1.ReplicationController) { r.Spec.Replicas = ptr.To[int32](0) })
	kittest.Eventually(t, 20*time.Second, "ReplicaFailure cleared", func() (bool, string) {
		c, got := failure()
		return c == nil && got.Status.ObservedGeneration == got.Generation, fmt.Sprintf("%+v", got.Status)
	})
}
