package resourcequota

import (
	"context"
	"fmt"
	"reflect"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes"

	"github.com/orch/orch/server/controllers/kit"
	"github.com/orch/orch/server/controllers/kit/kittest"
)

// deploymentCache stands for a controller that caches Deployments typed.
type deploymentCache struct{}

func (deploymentCache) Run(context.Context) error { return nil }

// TestCountsFromMetadata: with a metadata client the controller counts
// ConfigMaps and Secrets from metadata-only informers (their data is not
// held), and the counts still follow creates and deletes; a count-only
// resource another controller caches typed (Deployments here) is counted
// from that informer, not watched twice.
func TestCountsFromMetadata(t *testing.T) {
	cs, c := kittest.Run(t, New, kittest.MetadataClient(), kittest.Also(func(kc *kit.Context) (deploymentCache, error) {
		kc.Informers.Apps().V1().Deployments().Informer()
		return deploymentCache{}, nil
	}))
	ctx := t.Context()
	hard := corev1.ResourceList{corev1.ResourceConfigMaps: resource.MustParse("10"), corev1.ResourceSecrets: resource.MustParse("10"),
		"count/configmaps": resource.MustParse("10"), "count/deployments.apps": resource.MustParse("10")}
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
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "d"}, Spec: appsv1.DeploymentSpec{
		Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "d"}},
		Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "d"}},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}}}}
	if _, err := cs.AppsV1().Deployments("default").Create(ctx, d, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitUsed(ctx, t, cs, map[corev1.ResourceName]int64{corev1.ResourceConfigMaps: 3, "count/configmaps": 3, corev1.ResourceSecrets: 2,
		"count/deployments.apps": 1})
	store := c.objects[schema.GroupResource{Group: "apps", Resource: "deployments"}].Informer().GetStore()
	kittest.Eventually(t, 10*time.Second, "the Deployment in the quota's cache", func() (bool, string) {
		return len(store.List()) == 1, fmt.Sprintf("%d cached", len(store.List()))
	})
	if o := store.List()[0]; reflect.TypeOf(o) != reflect.TypeOf(&appsv1.Deployment{}) {
		t.Fatalf("deployments cached as %T, want the typed informer another controller runs", o)
	}
	for gr, n := range map[schema.GroupResource]int{{Resource: "configmaps"}: 3, {Resource: "secrets"}: 2} {
		store := c.objects[gr].Informer().GetStore()
		kittest.Eventually(t, 10*time.Second, gr.String()+" in the quota's cache", func() (bool, string) {
			return len(store.List()) >= n, fmt.Sprintf("%d cached", len(store.List()))
		})
		for _, o := range store.List() {
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
