package deployment

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestHashCollision: a foreign ReplicaSet already holds "<name>-<hash>",
// so the controller bumps status.collisionCount and uses the next hash.
func TestHashCollision(t *testing.T) {
	e := startEnv(t)
	d := newDeployment("coll", "img:1", 1)
	d.Spec.Paused = true // no ReplicaSet yet: read the defaulted template first
	d, err := e.client.AppsV1().Deployments("default").Create(e.ctx, d, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	taken := "coll-" + ComputeHash(&d.Spec.Template, nil)
	foreign := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: taken, Namespace: "default"},
		Spec: appsv1.ReplicaSetSpec{Replicas: new(int32), Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "other"}},
			Template: *d.Spec.Template.DeepCopy()}}
	foreign.Spec.Template.Labels = map[string]string{"app": "other"}
	if _, err := e.client.AppsV1().ReplicaSets("default").Create(e.ctx, foreign, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	e.patch("coll", `{"spec":{"paused":false}}`)
	e.waitFor("coll complete", func() bool { return e.complete("coll") })
	d = e.deployment("coll")
	rss := e.replicaSets("coll")
	if d.Status.CollisionCount == nil || *d.Status.CollisionCount != 1 || len(rss) != 1 || rss[0].Name == taken ||
		rss[0].Name != "coll-"+ComputeHash(&d.Spec.Template, d.Status.CollisionCount) {
		t.Fatalf("collisionCount %v, ReplicaSets %d (first %s, taken %s)", d.Status.CollisionCount, len(rss), rss[0].Name, taken)
	}
}
