package deployment

import (
	"context"
	"strings"
	"sync"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/orch/orch/server/controllers/kit/kittest"
	"github.com/orch/orch/server/controllers/replicaset"
)

// testEnv is the real API server with both controllers and a fake kubelet
// that marks every pod Ready unless its image is "never-ready".
type testEnv struct {
	t      *testing.T
	client kubernetes.Interface
	ctx    context.Context
}

func startEnv(t *testing.T) *testEnv {
	client, _ := kittest.Run(t, New, kittest.QPS(1000), kittest.Also(replicaset.New))
	e := &testEnv{t: t, client: client, ctx: t.Context()}
	w, err := client.CoreV1().Pods("default").Watch(e.ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	t.Cleanup(wg.Wait) // t.Context() ends before cleanups run: the kubelet stops
	wg.Go(func() { e.kubelet(w) })
	return e
}

// kubelet marks new pods Running and Ready.
func (e *testEnv) kubelet(w watch.Interface) {
	defer w.Stop()
	for {
		select {
		case <-e.ctx.Done():
			return
		case ev, ok := <-w.ResultChan():
			if !ok {
				return
			}
			p, isPod := ev.Object.(*corev1.Pod)
			if !isPod || ev.Type != watch.Added || p.Spec.Containers[0].Image == "never-ready" {
				continue
			}
			p = p.DeepCopy()
			p.Status.Phase = corev1.PodRunning
			p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: metav1.Now()}}
			_, _ = e.client.CoreV1().Pods(p.Namespace).UpdateStatus(e.ctx, p, metav1.UpdateOptions{})
		}
	}
}

func (e *testEnv) waitFor(what string, cond func() bool) {
	e.t.Helper()
	kittest.Until(e.t, what, cond)
}

func (e *testEnv) deployment(name string) *appsv1.Deployment {
	d, err := e.client.AppsV1().Deployments("default").Get(e.ctx, name, metav1.GetOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	return d
}

func (e *testEnv) replicaSets(name string) []appsv1.ReplicaSet {
	l, err := e.client.AppsV1().ReplicaSets("default").List(e.ctx, metav1.ListOptions{LabelSelector: "app=" + name})
	if err != nil {
		e.t.Fatal(err)
	}
	return l.Items
}

func (e *testEnv) complete(name string) bool {
	d := e.deployment(name)
	c := getCondition(d.Status, appsv1.DeploymentProgressing)
	return d.Status.ObservedGeneration == d.Generation && d.Status.UpdatedReplicas == *d.Spec.Replicas &&
		d.Status.Replicas == *d.Spec.Replicas && d.Status.AvailableReplicas == *d.Spec.Replicas &&
		c != nil && c.Reason == NewRSAvailableReason
}

func newDeployment(name, image string, replicas int32) *appsv1.Deployment {
	l := map[string]string{"app": name}
	return &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec: appsv1.DeploymentSpec{Replicas: ptr.To(replicas), Selector: &metav1.LabelSelector{MatchLabels: l},
			Strategy: appsv1.DeploymentStrategy{Type: appsv1.RollingUpdateDeploymentStrategyType,
				RollingUpdate: &appsv1.RollingUpdateDeployment{MaxSurge: ptr.To(intstr.FromInt32(1)), MaxUnavailable: ptr.To(intstr.FromInt32(0))}},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: l},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: image}}}}}}
}

func (e *testEnv) setImage(name, image string) {
	e.t.Helper()
	e.patch(name, `{"spec":{"template":{"spec":{"containers":[{"name":"c","image":"`+image+`"}]}}}}`)
}

// patch applies a strategic merge patch (no conflicts with status writes).
func (e *testEnv) patch(name, patch string) {
	e.t.Helper()
	if _, err := e.client.AppsV1().Deployments("default").Patch(e.ctx, name, types.StrategicMergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		e.t.Fatal(err)
	}
}

// watchBounds counts active pods at every pod event and records the most
// there were and the fewest ready ones.
func (e *testEnv) watchBounds(selector string) (stop func() (maxTotal, minReady int)) {
	l, err := e.client.CoreV1().Pods("default").List(e.ctx, metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		e.t.Fatal(err)
	}
	w, err := e.client.CoreV1().Pods("default").Watch(e.ctx, metav1.ListOptions{LabelSelector: selector, ResourceVersion: l.ResourceVersion})
	if err != nil {
		e.t.Fatal(err)
	}
	pods := map[string]*corev1.Pod{}
	for i := range l.Items {
		pods[l.Items[i].Name] = &l.Items[i]
	}
	maxTotal, minReady := 0, 1<<30
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ev := range w.ResultChan() {
			p, ok := ev.Object.(*corev1.Pod)
			if !ok {
				continue
			}
			if ev.Type == watch.Deleted || p.DeletionTimestamp != nil {
				delete(pods, p.Name)
			} else {
				pods[p.Name] = p
			}
			ready := 0
			for _, q := range pods {
				if replicaset.PodReady(q) {
					ready++
				}
			}
			maxTotal, minReady = max(maxTotal, len(pods)), min(minReady, ready)
		}
	}()
	return func() (int, int) { w.Stop(); <-done; return maxTotal, minReady }
}

func TestRollingUpdateAndRollback(t *testing.T) {
	e := startEnv(t)
	if _, err := e.client.AppsV1().Deployments("default").Create(e.ctx, newDeployment("web", "img:1", 3), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	e.waitFor("web complete", func() bool { return e.complete("web") })
	rss := e.replicaSets("web")
	if len(rss) != 1 {
		t.Fatalf("%d ReplicaSets", len(rss))
	}
	rs1 := rss[0]
	hash := rs1.Labels[appsv1.DefaultDeploymentUniqueLabelKey]
	if rs1.Name != "web-"+hash || rs1.Spec.Selector.MatchLabels[appsv1.DefaultDeploymentUniqueLabelKey] != hash ||
		rs1.Annotations[RevisionAnnotation] != "1" || rs1.Annotations[DesiredReplicasAnnotation] != "3" || rs1.Annotations[MaxReplicasAnnotation] != "4" {
		t.Fatalf("first ReplicaSet %s labels %v annotations %v", rs1.Name, rs1.Labels, rs1.Annotations)
	}
	pods, _ := e.client.CoreV1().Pods("default").List(e.ctx, metav1.ListOptions{LabelSelector: "app=web"})
	for _, p := range pods.Items {
		ref := metav1.GetControllerOf(&p)
		if !strings.HasPrefix(p.Name, rs1.Name+"-") || len(p.Name) != len(rs1.Name)+6 || ref == nil || ref.UID != rs1.UID || !*ref.BlockOwnerDeletion {
			t.Fatalf("pod %s refs %+v", p.Name, p.OwnerReferences)
		}
	}

	stop := e.watchBounds("app=web")
	e.setImage("web", "img:2")
	e.waitFor("rollout to img:2", func() bool { return e.complete("web") && len(e.replicaSets("web")) == 2 })
	maxTotal, minReady := stop()
	if maxTotal > 4 || minReady < 3 {
		t.Fatalf("maxSurge 1 / maxUnavailable 0 broken: %d pods at most, %d ready at least", maxTotal, minReady)
	}
	if d := e.deployment("web"); d.Annotations[RevisionAnnotation] != "2" {
		t.Fatalf("deployment revision %q", d.Annotations[RevisionAnnotation])
	}

	// kubectl rollout undo: the template of revision 1 is patched back.
	e.setImage("web", "img:1")
	e.waitFor("rollback to img:1", func() bool {
		if !e.complete("web") {
			return false
		}
		for _, rs := range e.replicaSets("web") {
			if rs.UID == rs1.UID {
				return *rs.Spec.Replicas == 3 && rs.Annotations[RevisionAnnotation] == "3" && rs.Annotations[RevisionHistoryAnnotation] == "1"
			}
		}
		return false
	})
}

func TestScaleAndProgressDeadline(t *testing.T) {
	e := startEnv(t)
	d := newDeployment("api", "img:1", 2)
	d.Spec.ProgressDeadlineSeconds = ptr.To[int32](2)
	if _, err := e.client.AppsV1().Deployments("default").Create(e.ctx, d, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	e.waitFor("api complete", func() bool { return e.complete("api") })
	if _, err := e.client.AppsV1().Deployments("default").UpdateScale(e.ctx, "api",
		&autoscalingv1.Scale{ObjectMeta: metav1.ObjectMeta{Name: "api", Namespace: "default"}, Spec: autoscalingv1.ScaleSpec{Replicas: 5}},
		metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	e.waitFor("api scaled to 5", func() bool { return e.complete("api") && e.deployment("api").Status.AvailableReplicas == 5 })
	e.setImage("api", "never-ready")
	e.waitFor("ProgressDeadlineExceeded", func() bool {
		c := getCondition(e.deployment("api").Status, appsv1.DeploymentProgressing)
		return c != nil && c.Reason == TimedOutReason && c.Status == corev1.ConditionFalse
	})
	e.waitFor("stuck rollout: 5 old available, 1 new", func() bool {
		d := e.deployment("api")
		return d.Status.AvailableReplicas == 5 && d.Status.UpdatedReplicas == 1 && d.Status.UnavailableReplicas == 1
	})
}
