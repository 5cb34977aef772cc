package replicaset

import (
	"context"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"github.com/orch/orch/server/controllers/kit/kittest"
)

// startReal runs the controller against the real API server (memory
// store); setup runs before the cache starts, so the cache holds what it made.
func startReal(t *testing.T, setup func(context.Context, kubernetes.Interface)) (kubernetes.Interface, context.Context) {
	client, _ := kittest.Run(t, New, kittest.QPS(1000), kittest.Setup(func(ctx context.Context, client kubernetes.Interface) {
		if _, err := client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "ns"}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		setup(ctx, client)
	}))
	return client, t.Context()
}

func listPods(t *testing.T, ctx context.Context, client kubernetes.Interface) []corev1.Pod {
	l, err := client.CoreV1().Pods("ns").List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return l.Items
}

func ownedBy(pods []corev1.Pod, uid types.UID) int {
	n := 0
	for _, p := range pods {
		if ref := metav1.GetControllerOf(&p); ref != nil && ref.UID == uid {
			n++
		}
	}
	return n
}

// TestAdoptReleaseAndMinReady: an orphan that matches is adopted (so only
// one pod is created), a pod relabelled out of the selector is released and
// replaced, and a ready pod counts as available only after minReadySeconds.
func TestAdoptReleaseAndMinReady(t *testing.T) {
	client, ctx := startReal(t, func(ctx context.Context, client kubernetes.Interface) {
		orphan := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "orphan", Namespace: "ns", Labels: map[string]string{"app": "web"}},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "img"}}}}
		if _, err := client.CoreV1().Pods("ns").Create(ctx, orphan, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	})
	rs := newRS("web", 2)
	rs.UID = ""
	rs.Spec.MinReadySeconds = 2
	rs, err := client.AppsV1().ReplicaSets("ns").Create(ctx, rs, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	kittest.Until(t, "2 pods owned", func() bool { return ownedBy(listPods(t, ctx, client), rs.UID) == 2 })
	pods := listPods(t, ctx, client)
	if len(pods) != 2 {
		t.Fatalf("%d pods, want the orphan adopted and one created", len(pods))
	}
	p, err := client.CoreV1().Pods("ns").Get(ctx, "orphan", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if ref := metav1.GetControllerOf(p); ref == nil || ref.UID != rs.UID || !*ref.BlockOwnerDeletion || ref.APIVersion != "apps/v1" {
		t.Fatalf("orphan refs %+v", p.OwnerReferences)
	}

	p.Labels = map[string]string{"app": "other"}
	if _, err := client.CoreV1().Pods("ns").Update(ctx, p, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	kittest.Until(t, "release and replacement", func() bool {
		p, _ := client.CoreV1().Pods("ns").Get(ctx, "orphan", metav1.GetOptions{})
		return len(p.OwnerReferences) == 0 && ownedBy(listPods(t, ctx, client), rs.UID) == 2
	})

	for _, p := range listPods(t, ctx, client) {
		if p.Labels["app"] != "web" {
			continue
		}
		p.Status.Phase = corev1.PodRunning
		p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: metav1.Now()}}
		if _, err := client.CoreV1().Pods("ns").UpdateStatus(ctx, &p, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	kittest.Until(t, "2 ready, 0 available", func() bool {
		st := getRS(t, ctx, client).Status
		return st.ReadyReplicas == 2 && st.AvailableReplicas == 0
	})
	kittest.Until(t, "2 available after minReadySeconds", func() bool {
		st := getRS(t, ctx, client).Status
		return st.AvailableReplicas == 2 && st.Replicas == 2 && st.FullyLabeledReplicas == 2
	})
	if got := getRS(t, ctx, client); got.Status.ObservedGeneration != got.Generation {
		t.Fatalf("observedGeneration %d, generation %d", got.Status.ObservedGeneration, got.Generation)
	}
}

func getRS(t *testing.T, ctx context.Context, client kubernetes.Interface) *appsv1.ReplicaSet {
	rs, err := client.AppsV1().ReplicaSets("ns").Get(ctx, "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return rs
}
