package e2e

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
)

// deployManifest is a 3-replica Deployment whose busybox pods stop at once
// on SIGTERM; no probes, so a pod is Ready as soon as it runs.
const deployManifest = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  labels:
    app: web
spec:
  replicas: 3
  revisionHistoryLimit: 5
  progressDeadlineSeconds: 120
  selector:
    matchLabels:
      app: web
  strategy:
    type: RollingUpdate
    rollingUpdate:
      maxSurge: 1
      maxUnavailable: 0
  template:
    metadata:
      labels:
        app: web
    spec:
      terminationGracePeriodSeconds: 1
      containers:
      - name: web
        image: busybox:1.36
        imagePullPolicy: IfNotPresent
        command: ["sh", "-c", "trap 'exit 0' TERM; while true; do sleep 1; done"]
`

// TestDeploy drives a Deployment with the real kubectl on a real node:
// rolling update within maxSurge/maxUnavailable watched pod by pod, rollout
// undo/history/pause/resume/restart, scale, pod replacement and cascading
// deletion (which needs the garbage collector).
func TestDeploy(t *testing.T) {
	e := startCluster(t)
	cs := e.server.Clientset
	waitNodeReady(t, e, false)
	k := newKubectl(t, e)
	k.must(deployManifest, "apply", "-f", "-")
	deployRolloutStatus(t, k.with(t))
	deployWaitPods(t, cs, 3, "busybox:1.36")
	t.Run("RollingUpdateWithinBounds", func(t *testing.T) { deployRollingUpdate(t, k.with(t), cs) })
	t.Run("RolloutHistory", func(t *testing.T) { deployHistory(t, k.with(t)) })
	t.Run("RolloutUndo", func(t *testing.T) { deployUndo(t, k.with(t), cs) })
	t.Run("DeletedPodReplaced", func(t *testing.T) { deployPodReplaced(t, cs) })
	t.Run("Scale", func(t *testing.T) { deployScale(t, k.with(t), cs) })
	t.Run("PauseResume", func(t *testing.T) { deployPauseResume(t, k.with(t), cs) })
	t.Run("Restart", func(t *testing.T) { deployRestart(t, k.with(t), cs) })
	t.Run("Events", func(t *testing.T) { deployEvents(t, cs) })
	t.Run("Describe", func(t *testing.T) {
		out := k.with(t).must("", "describe", "deployment", "web")
		for _, w := range []string{"NewReplicaSet:", "(3/3 replicas created)", "ScalingReplicaSet", "NewReplicaSetAvailable", "MinimumReplicasAvailable"} {
			if !strings.Contains(out, w) {
				t.Errorf("kubectl describe deployment lacks %q:\n%s", w, out)
			}
		}
	})
	t.Run("Recreate", func(t *testing.T) { deployRecreate(t, k.with(t), cs) })
	t.Run("DeleteCascades", func(t *testing.T) { deployDeleteCascades(t, k.with(t), cs) })
}

func deployRolloutStatus(t *testing.T, k *kubectlRunner) {
	t.Helper()
	out := k.must("", "rollout", "status", "deployment/web", "--timeout=120s")
	if !strings.Contains(out, `deployment "web" successfully rolled out`) {
		t.Fatalf("kubectl rollout status:\n%s", out)
	}
}

// deployActivePods lists the pods of app=web that are not terminating.
func deployActivePods(t *testing.T, cs kubernetes.Interface) []corev1.Pod {
	t.Helper()
	l, err := cs.CoreV1().Pods("default").List(context.Background(), metav1.ListOptions{LabelSelector: "app=web"})
	if err != nil {
		t.Fatal(err)
	}
	var out []corev1.Pod
	for _, p := range l.Items {
		if deployPodActive(&p) {
			out = append(out, p)
		}
	}
	return out
}

func deployPodActive(p *corev1.Pod) bool {
	return p.DeletionTimestamp == nil && p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed
}

// deployWaitPods waits for n Ready pods of app=web, all running image, and
// no other active pods.
func deployWaitPods(t *testing.T, cs kubernetes.Interface, n int, image string) []corev1.Pod {
	t.Helper()
	var pods []corev1.Pod
	waitFor(t, 120*time.Second, fmt.Sprintf("%d ready web pods with %s", n, image), func() (bool, error) {
		pods = deployActivePods(t, cs)
		if len(pods) != n {
			return false, fmt.Errorf("%d active pods", len(pods))
		}
		for _, p := range pods {
			if !podReady(&p) || p.Spec.Containers[0].Image != image {
				return false, fmt.Errorf("pod %s ready=%v image %s", p.Name, podReady(&p), p.Spec.Containers[0].Image)
			}
		}
		return true, nil
	})
	return pods
}

// deployBounds watches app=web pods and, at every event, counts the active
// pods and the ready ones among them.
type deployBounds struct {
	w        watch.Interface
	done     chan struct{}
	mu       sync.Mutex
	maxTotal int
	minReady int
	events   int
}

func deployWatchBounds(t *testing.T, cs kubernetes.Interface) *deployBounds {
	t.Helper()
	ctx := context.Background()
	l, err := cs.CoreV1().Pods("default").List(ctx, metav1.ListOptions{LabelSelector: "app=web"})
	if err != nil {
		t.Fatal(err)
	}
	w, err := cs.CoreV1().Pods("default").Watch(ctx, metav1.ListOptions{LabelSelector: "app=web", ResourceVersion: l.ResourceVersion})
	if err != nil {
		t.Fatal(err)
	}
	b := &deployBounds{w: w, done: make(chan struct{}), minReady: 1 << 30}
	pods := map[string]*corev1.Pod{}
	for i := range l.Items {
		pods[l.Items[i].Name] = &l.Items[i]
	}
	b.count(pods)
	go func() {
		defer close(b.done)
		for ev := range w.ResultChan() {
			p, ok := ev.Object.(*corev1.Pod)
			if !ok {
				continue
			}
			if ev.Type == watch.Deleted {
				delete(pods, p.Name)
			} else {
				pods[p.Name] = p
			}
			b.count(pods)
		}
	}()
	t.Cleanup(b.stop)
	return b
}

func (b *deployBounds) count(pods map[string]*corev1.Pod) {
	total, ready := 0, 0
	for _, p := range pods {
		if !deployPodActive(p) {
			continue
		}
		total++
		if podReady(p) {
			ready++
		}
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.events++
	b.maxTotal, b.minReady = max(b.maxTotal, total), min(b.minReady, ready)
}

func (b *deployBounds) stop() {
	b.w.Stop()
	<-b.done
}

// check fails unless there were at most maxTotal active pods and at least
// minReady ready ones at every event.
func (b *deployBounds) check(t *testing.T, maxTotal, minReady int) {
	t.Helper()
	b.stop()
	b.mu.Lock()
	defer b.mu.Unlock()
	t.Logf("%d pod events: at most %d active pods, at least %d ready", b.events, b.maxTotal, b.minReady)
	if b.maxTotal > maxTotal || b.minReady < minReady {
		t.Fatalf("rollout left its bounds: %d active pods (max %d), %d ready (min %d)", b.maxTotal, maxTotal, b.minReady, minReady)
	}
}

func deployRollingUpdate(t *testing.T, k *kubectlRunner, cs kubernetes.Interface) {
	b := deployWatchBounds(t, cs)
	k.must("", "set", "image", "deployment/web", "web=nginx:1.25")
	deployRolloutStatus(t, k)
	deployWaitPods(t, cs, 3, "nginx:1.25")
	b.check(t, 4, 3) // replicas 3, maxSurge 1, maxUnavailable 0
	d := deployGet(t, cs)
	if d.Annotations["deployment.kubernetes.io/revision"] != "2" || d.Status.UpdatedReplicas != 3 || d.Status.AvailableReplicas != 3 {
		t.Fatalf("after the rollout: revision %q status %+v", d.Annotations["deployment.kubernetes.io/revision"], d.Status)
	}
	rss := deployReplicaSets(t, cs)
	if len(rss) != 2 {
		t.Fatalf("%d ReplicaSets, want 2", len(rss))
	}
	for _, rs := range rss {
		hash := rs.Labels[appsv1.DefaultDeploymentUniqueLabelKey]
		if hash == "" || rs.Name != "web-"+hash || rs.Spec.Selector.MatchLabels[appsv1.DefaultDeploymentUniqueLabelKey] != hash {
			t.Errorf("ReplicaSet %s: labels %v selector %v", rs.Name, rs.Labels, rs.Spec.Selector)
		}
	}
}

func deployHistory(t *testing.T, k *kubectlRunner) {
	out := k.must("", "rollout", "history", "deployment/web")
	if !strings.Contains(out, "REVISION") || !deployHasRevisionLine(out, "1") || !deployHasRevisionLine(out, "2") {
		t.Fatalf("kubectl rollout history:\n%s", out)
	}
	out = k.must("", "rollout", "history", "deployment/web", "--revision=1")
	if !strings.Contains(out, "busybox:1.36") {
		t.Fatalf("kubectl rollout history --revision=1:\n%s", out)
	}
}

func deployHasRevisionLine(out, rev string) bool {
	for _, l := range strings.Split(out, "\n") {
		if f := strings.Fields(l); len(f) > 0 && f[0] == rev {
			return true
		}
	}
	return false
}

func deployUndo(t *testing.T, k *kubectlRunner, cs kubernetes.Interface) {
	b := deployWatchBounds(t, cs)
	out := k.must("", "rollout", "undo", "deployment/web")
	if !strings.Contains(out, "rolled back") {
		t.Fatalf("kubectl rollout undo:\n%s", out)
	}
	deployRolloutStatus(t, k)
	deployWaitPods(t, cs, 3, "busybox:1.36")
	b.check(t, 4, 3)
	if d := deployGet(t, cs); d.Annotations["deployment.kubernetes.io/revision"] != "3" {
		t.Fatalf("revision after undo: %q", d.Annotations["deployment.kubernetes.io/revision"])
	}
	if rss := deployReplicaSets(t, cs); len(rss) != 2 {
		t.Fatalf("undo made a new ReplicaSet: %d", len(rss))
	}
	out = k.must("", "rollout", "history", "deployment/web")
	if deployHasRevisionLine(out, "1") || !deployHasRevisionLine(out, "2") || !deployHasRevisionLine(out, "3") {
		t.Fatalf("history after undo (revision 1 became 3):\n%s", out)
	}
}

func deployPodReplaced(t *testing.T, cs kubernetes.Interface) {
	pods := deployWaitPods(t, cs, 3, "busybox:1.36")
	victim := pods[0].Name
	if err := cs.CoreV1().Pods("default").Delete(context.Background(), victim, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 90*time.Second, "a replacement for "+victim, func() (bool, error) {
		pods := deployActivePods(t, cs)
		ready := 0
		for _, p := range pods {
			if p.Name == victim {
				return false, nil
			}
			if podReady(&p) {
				ready++
			}
		}
		return ready == 3 && len(pods) == 3, fmt.Errorf("%d active, %d ready", len(pods), ready)
	})
}

func deployScale(t *testing.T, k *kubectlRunner, cs kubernetes.Interface) {
	k.must("", "scale", "deployment/web", "--replicas=5")
	deployRolloutStatus(t, k)
	deployWaitPods(t, cs, 5, "busybox:1.36")
	k.must("", "scale", "deployment/web", "--replicas=2")
	deployWaitPods(t, cs, 2, "busybox:1.36")
	deployRolloutStatus(t, k)
	out := k.must("", "get", "deployment", "web")
	if !strings.Contains(out, "2/2") {
		t.Fatalf("kubectl get deployment:\n%s", out)
	}
	k.must("", "scale", "deployment/web", "--replicas=3")
	deployWaitPods(t, cs, 3, "busybox:1.36")
}

func deployPauseResume(t *testing.T, k *kubectlRunner, cs kubernetes.Interface) {
	k.must("", "rollout", "pause", "deployment/web")
	k.must("", "set", "image", "deployment/web", "web=nginx:1.25")
	waitFor(t, 30*time.Second, "the paused change observed", func() (bool, error) {
		d := deployGet(t, cs)
		return d.Status.ObservedGeneration == d.Generation && deployProgressingReason(d) == "DeploymentPaused", nil
	})
	if rss := deployReplicaSets(t, cs); len(rss) != 2 {
		t.Fatalf("a paused Deployment made a new ReplicaSet: %d", len(rss))
	}
	for _, p := range deployActivePods(t, cs) {
		if p.Spec.Containers[0].Image != "busybox:1.36" {
			t.Fatalf("paused Deployment rolled pod %s to %s", p.Name, p.Spec.Containers[0].Image)
		}
	}
	k.must("", "rollout", "resume", "deployment/web")
	deployRolloutStatus(t, k)
	deployWaitPods(t, cs, 3, "nginx:1.25")
}

func deployRestart(t *testing.T, k *kubectlRunner, cs kubernetes.Interface) {
	before := map[string]bool{}
	for _, p := range deployActivePods(t, cs) {
		before[p.Name] = true
	}
	b := deployWatchBounds(t, cs)
	k.must("", "rollout", "restart", "deployment/web")
	deployRolloutStatus(t, k)
	pods := deployWaitPods(t, cs, 3, "nginx:1.25")
	b.check(t, 4, 3)
	for _, p := range pods {
		if before[p.Name] {
			t.Fatalf("pod %s survived the restart", p.Name)
		}
		if p.Spec.Containers[0].Image != "nginx:1.25" || p.Annotations["kubectl.kubernetes.io/restartedAt"] == "" {
			t.Fatalf("restarted pod %s: annotations %v", p.Name, p.Annotations)
		}
	}
}

func deployEvents(t *testing.T, cs kubernetes.Interface) {
	waitFor(t, 30*time.Second, "ScalingReplicaSet and SuccessfulCreate events", func() (bool, error) {
		l, err := cs.CoreV1().Events("default").List(context.Background(), metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		var scaled, created bool
		for _, ev := range l.Items {
			switch {
			case ev.Reason == "ScalingReplicaSet" && ev.InvolvedObject.Kind == "Deployment" &&
				strings.HasPrefix(ev.Message, "Scaled up replica set web-") && strings.HasSuffix(ev.Message, " from 0 to 1"):
				scaled = true
			case ev.Reason == "SuccessfulCreate" && ev.InvolvedObject.Kind == "ReplicaSet" && strings.HasPrefix(ev.Message, "Created pod: web-"):
				created = true
			}
		}
		return scaled && created, fmt.Errorf("scaled=%v created=%v", scaled, created)
	})
}

// deployDeleteCascades needs the garbage collector: the Deployment's
// ReplicaSets and their pods go with it.
func deployDeleteCascades(t *testing.T, k *kubectlRunner, cs kubernetes.Interface) {
	k.must("", "delete", "deployment", "web", "--wait=false")
	waitFor(t, 90*time.Second, "ReplicaSets and pods of web deleted", func() (bool, error) {
		rss := deployReplicaSets(t, cs)
		l, err := cs.CoreV1().Pods("default").List(context.Background(), metav1.ListOptions{LabelSelector: "app=web"})
		if err != nil {
			return false, err
		}
		return len(rss) == 0 && len(l.Items) == 0, fmt.Errorf("%d ReplicaSets, %d pods left", len(rss), len(l.Items))
	})
}

func deployGet(t *testing.T, cs kubernetes.Interface) *appsv1.Deployment {
	t.Helper()
	d, err := cs.AppsV1().Deployments("default").Get(context.Background(), "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func deployReplicaSets(t *testing.T, cs kubernetes.Interface) []appsv1.ReplicaSet {
	t.Helper()
	l, err := cs.AppsV1().ReplicaSets("default").List(context.Background(), metav1.ListOptions{LabelSelector: "app=web"})
	if err != nil {
		t.Fatal(err)
	}
	return l.Items
}

func deployProgressingReason(d *appsv1.Deployment) string {
	for _, c := range d.Status.Conditions {
		if c.Type == appsv1.DeploymentProgressing {
			return c.Reason
		}
	}
	return ""
}

// deployRecreateManifest is a Recreate Deployment: old pods must be gone
// before any new one is created.
const deployRecreateManifest = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: batch
spec:
  replicas: 2
  selector:
    matchLabels:
      app: batch
  strategy:
    type: Recreate
  template:
    metadata:
      labels:
        app: batch
    spec:
      terminationGracePeriodSeconds: 2
      containers:
      - name: batch
        image: busybox:1.36
        imagePullPolicy: IfNotPresent
        command: ["sh", "-c", "trap 'exit 0' TERM; while true; do sleep 1; done"]
`

func deployRecreate(t *testing.T, k *kubectlRunner, cs kubernetes.Interface) {
	k.must(deployRecreateManifest, "apply", "-f", "-")
	if out := k.must("", "rollout", "status", "deployment/batch", "--timeout=120s"); !strings.Contains(out, "successfully rolled out") {
		t.Fatalf("kubectl rollout status:\n%s", out)
	}
	ctx := context.Background()
	l, err := cs.CoreV1().Pods("default").List(ctx, metav1.ListOptions{LabelSelector: "app=batch"})
	if err != nil {
		t.Fatal(err)
	}
	w, err := cs.CoreV1().Pods("default").Watch(ctx, metav1.ListOptions{LabelSelector: "app=batch", ResourceVersion: l.ResourceVersion})
	if err != nil {
		t.Fatal(err)
	}
	images := map[string]string{} // every pod that still exists, terminating or not
	for _, p := range l.Items {
		images[p.Name] = p.Spec.Containers[0].Image
	}
	var mixed []string
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ev := range w.ResultChan() {
			p, ok := ev.Object.(*corev1.Pod)
			if !ok {
				continue
			}
			if ev.Type == watch.Deleted || p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
				delete(images, p.Name)
			} else {
				images[p.Name] = p.Spec.Containers[0].Image
			}
			seen := map[string]bool{}
			for _, img := range images {
				seen[img] = true
			}
			if len(seen) > 1 && mixed == nil {
				mixed = []string{fmt.Sprint(images)}
			}
		}
	}()
	k.must("", "set", "image", "deployment/batch", "batch=nginx:1.25")
	if out := k.must("", "rollout", "status", "deployment/batch", "--timeout=120s"); !strings.Contains(out, "successfully rolled out") {
		t.Fatalf("kubectl rollout status:\n%s", out)
	}
	w.Stop()
	<-done
	if mixed != nil {
		t.Fatalf("Recreate ran old and new pods together: %v", mixed[0])
	}
	waitFor(t, 60*time.Second, "2 ready batch pods on nginx:1.25", func() (bool, error) {
		l, err := cs.CoreV1().Pods("default").List(ctx, metav1.ListOptions{LabelSelector: "app=batch"})
		if err != nil {
			return false, err
		}
		n := 0
		for _, p := range l.Items {
			if deployPodActive(&p) && podReady(&p) && p.Spec.Containers[0].Image == "nginx:1.25" {
				n++
			}
		}
		return n == 2 && len(l.Items) == 2, fmt.Errorf("%d pods, %d new and ready", len(l.Items), n)
	})
	k.must("", "delete", "deployment", "batch", "--wait=false")
}
