package resourcequota

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/orch/orch/server/controllers/kit/kittest"
)

func start(t *testing.T) (context.Context, kubernetes.Interface) {
	cs, _ := kittest.Run(t, New)
	return t.Context(), cs
}

func cpuPod(name, cpu string) *corev1.Pod {
	rl := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse("10Mi")}
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox",
			Resources: corev1.ResourceRequirements{Requests: rl, Limits: rl}}}}}
}

// TestQuotaAdmission: creates are charged atomically, the third pod is
// refused with upstream's message, and a deletion gives the room back.
func TestQuotaAdmission(t *testing.T) {
	ctx, cs := start(t)
	_, err := cs.CoreV1().ResourceQuotas("default").Create(ctx, &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Name: "q"},
		Spec: corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{corev1.ResourcePods: resource.MustParse("5"),
			corev1.ResourceRequestsCPU: resource.MustParse("1")}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pods := cs.CoreV1().Pods("default")
	for _, n := range []string{"a", "b"} {
		if _, err := pods.Create(ctx, cpuPod(n, "500m"), metav1.CreateOptions{}); err != nil {
			t.Fatalf("pod %s: %v", n, err)
		}
	}
	_, err = pods.Create(ctx, cpuPod("c", "500m"), metav1.CreateOptions{})
	want := `pods "c" is forbidden: exceeded quota: q, requested: requests.cpu=500m, used: requests.cpu=1, limited: requests.cpu=1`
	if !apierrors.IsForbidden(err) || err.Error() != want {
		t.Fatalf("third pod: got %v\nwant %s", err, want)
	}
	noReq := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "d"}, Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}}
	if _, err := pods.Create(ctx, noReq, metav1.CreateOptions{}); !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "must specify requests.cpu") {
		t.Fatalf("pod without requests: %v", err)
	}
	if err := pods.Delete(ctx, "a", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		_, err = pods.Create(ctx, cpuPod("c", "500m"), metav1.CreateOptions{})
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("room never came back: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	// The controller recounts after the create: wait for it.
	for {
		q, _ := cs.CoreV1().ResourceQuotas("default").Get(ctx, "q", metav1.GetOptions{})
		if u := q.Status.Used[corev1.ResourcePods]; u.Value() == 2 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("used pods %v, want 2", q.Status.Used)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func TestLimitRangeAdmission(t *testing.T) {
	ctx, cs := start(t)
	_, err := cs.CoreV1().LimitRanges("default").Create(ctx, &corev1.LimitRange{ObjectMeta: metav1.ObjectMeta{Name: "lr"},
		Spec: corev1.LimitRangeSpec{Limits: []corev1.LimitRangeItem{{Type: corev1.LimitTypeContainer,
			Max:            corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")},
			Default:        corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m")},
			DefaultRequest: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m")}}}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pods := cs.CoreV1().Pods("default")
	p, err := pods.Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "plain"},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	r := p.Spec.Containers[0].Resources
	if r.Limits.Cpu().String() != "500m" || r.Requests.Cpu().String() != "100m" || p.Status.QOSClass != corev1.PodQOSBurstable {
		t.Fatalf("defaults not applied: %+v qos %s", r, p.Status.QOSClass)
	}
	_, err = pods.Create(ctx, cpuPod("big", "2"), metav1.CreateOptions{})
	want := `pods "big" is forbidden: maximum cpu usage per Container is 1, but limit is 2`
	if !apierrors.IsForbidden(err) || err.Error() != want {
		t.Fatalf("got %v\nwant %s", err, want)
	}
}
