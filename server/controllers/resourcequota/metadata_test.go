package resourcequota

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes"

	"github.com/orch/orch/server/controllers/kit/kittest"
)

// TestCountsFromMetadata: with a metadata client the controller counts
// ConfigMaps and Secrets from metadata-only informers (their data is not
// held), and the counts still follow creates and deletes.
func TestCountsFromMetadata(t *testing.T) {
	cs, c := kittest.Run(t, New, kittest.MetadataClient())
	ctx := t.Context()
	hard := corev1.ResourceList{corev1.ResourceConfigMaps: resource.MustParse("10"), corev1.ResourceSecrets: resource.MustParse("10"),
		"count/configmaps": resource.MustParse("10")}
	if _, err := cs.CoreV1().ResourceQuotas("default").Create(ctx, &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Name: "q"},
		Spec: corev1.ResourceQuotaSpec{Hard: hard}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cm%d", i)}, Data: map[string]string{"k": "v"}}
		if _, err := cs.CoreV1().ConfigMaps("default").Create(ctx, cm, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 2 {
		s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("s%d", i)}, StringData: map[string]string{"k": "v"}}
		if _, err := cs.CoreV1().Secrets("default").Create(ctx, s, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	waitUsed(ctx, t, cs, map[corev1.ResourceName]int64{corev1.ResourceConfigMaps: 3, "count/configmaps": 3, corev1.ResourceSecrets: 2})
	for _, gr := range []schema.GroupResource{{Resource: "configmaps"}, {Resource: "secrets"}} {
		for _, o := range c.objects[gr].Informer().GetStore().List() {
			if _, ok := o.(*metav1.PartialObjectMetadata); !ok {
				t.Fatalf("%s cached as %T, want metadata only", gr, o)
			}
		}
	}
	if err := cs.CoreV1().ConfigMaps("default").Delete(ctx, "cm0", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitUsed(ctx, t, cs, map[corev1.ResourceName]int64{corev1.ResourceConfigMaps: 2, "count/configmaps": 2, corev1.ResourceSecrets: 2})
}

// waitUsed waits until the quota q of default shows want as used.
func waitUsed(ctx context.Context, t *testing.T, cs kubernetes.Interface, want map[corev1.ResourceName]int64) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		q, err := cs.CoreV1().ResourceQuotas("default").Get(ctx, "q", metav1.GetOptions{})
		if err == nil && usedIs(q.Status.Used, want) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("used %v (err %v), want %v", q.Status.Used, err, want)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func usedIs(used corev1.ResourceList, want map[corev1.ResourceName]int64) bool {
	for name, n := range want {
		if v, ok := used[name]; !ok || v.Value() != n {
			return false
		}
	}
	return true
}
