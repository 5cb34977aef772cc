package resourcequota

import (
	"context"
	"testing"

	"go.uber.org/zap/zaptest"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/orch/orch/server/controllers/kit"
)

func TestFreshListCoversCounted(t *testing.T) {
	c := fake.NewClientset()
	for _, r := range counted {
		if _, err := listFresh(context.Background(), c, r.gvr.GroupResource(), "ns"); err != nil {
			t.Errorf("%v: %v", r.gvr, err)
		}
	}
}

// TestLaggingCacheKeepsCharges: admission charged two pods but the cache
// shows one; the recount must not give the second pod's room back until
// the API server says it is gone.
func TestLaggingCacheKeepsCharges(t *testing.T) {
	two := resource.MustParse("2")
	q := &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Name: "q", Namespace: "ns"},
		Spec:   corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{corev1.ResourcePods: two}},
		Status: corev1.ResourceQuotaStatus{Hard: corev1.ResourceList{corev1.ResourcePods: two}, Used: corev1.ResourceList{corev1.ResourcePods: two}}}
	pod := func(name string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns"}}
	}
	client := fake.NewClientset(q, pod("a"), pod("b"))
	kc := kit.New(client, zaptest.NewLogger(t), kit.Options{})
	c, err := New(kc)
	if err != nil {
		t.Fatal(err)
	}
	_ = kc.Informers.Core().V1().ResourceQuotas().Informer().GetIndexer().Add(q)
	_ = kc.Informers.Core().V1().Pods().Informer().GetIndexer().Add(pod("a"))
	usedPods := func() int64 {
		got, err := client.CoreV1().ResourceQuotas("ns").Get(context.Background(), "q", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		u := got.Status.Used[corev1.ResourcePods]
		return u.Value()
	}
	ctx := context.Background()
	if err := c.sync(ctx, "ns/q"); err != nil {
		t.Fatal(err)
	}
	if n := usedPods(); n != 2 {
		t.Fatalf("used pods %d after a recount from a lagging cache, want 2", n)
	}
	if err := client.CoreV1().Pods("ns").Delete(ctx, "b", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := c.sync(ctx, "ns/q"); err != nil {
		t.Fatal(err)
	}
	if n := usedPods(); n != 1 {
		t.Fatalf("used pods %d once the API shows one pod, want 1", n)
	}
}
