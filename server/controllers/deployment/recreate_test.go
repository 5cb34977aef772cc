package deployment

import (
	"fmt"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/ptr"
)

// TestRecreateAndHistoryLimit: Recreate never runs old and new pods at the
// same time, and only revisionHistoryLimit old ReplicaSets are kept.
func TestRecreateAndHistoryLimit(t *testing.T) {
	e := startEnv(t)
	d := newDeployment("batch", "img:1", 2)
	d.Spec.Strategy = appsv1.DeploymentStrategy{Type: appsv1.RecreateDeploymentStrategyType}
	d.Spec.RevisionHistoryLimit = ptr.To[int32](1)
	if _, err := e.client.AppsV1().Deployments("default").Create(e.ctx, d, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	e.waitFor("batch complete", func() bool { return e.complete("batch") })
	l, err := e.client.CoreV1().Pods("default").List(e.ctx, metav1.ListOptions{LabelSelector: "app=batch"})
	if err != nil {
		t.Fatal(err)
	}
	w, err := e.client.CoreV1().Pods("default").Watch(e.ctx, metav1.ListOptions{LabelSelector: "app=batch", ResourceVersion: l.ResourceVersion})
	if err != nil {
		t.Fatal(err)
	}
	images := map[string]string{}
	for _, p := range l.Items {
		images[p.Name] = p.Spec.Containers[0].Image
	}
	mixed := make(chan string, 1)
	go func() {
		for ev := range w.ResultChan() {
			p, ok := ev.Object.(*corev1.Pod)
			if !ok {
				continue
			}
			if ev.Type == watch.Deleted || p.DeletionTimestamp != nil {
				delete(images, p.Name)
			} else {
				images[p.Name] = p.Spec.Containers[0].Image
			}
			seen := map[string]bool{}
			for _, img := range images {
				seen[img] = true
			}
			if len(seen) > 1 {
				select {
				case mixed <- fmt.Sprint(images):
				default:
				}
			}
		}
	}()
	for i, img := range []string{"img:2", "img:3"} {
		e.setImage("batch", img)
		e.waitFor("recreated with "+img, func() bool { return e.complete("batch") && len(e.replicaSets("batch")) == min(i+2, 2) })
	}
	w.Stop()
	select {
	case m := <-mixed:
		t.Fatalf("old and new pods ran together: %v", m)
	default:
	}
	rss := e.replicaSets("batch")
	revs := map[string]bool{}
	for _, rs := range rss {
		revs[rs.Annotations[RevisionAnnotation]] = true
	}
	if len(rss) != 2 || !revs["2"] || !revs["3"] {
		t.Fatalf("kept ReplicaSets with revisions %v, want 2 and 3", revs)
	}
}
