package e2e

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
)

// setsSTSManifest: 3 ordered pods, each with its own local-path claim.
const setsSTSManifest = `apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: sets-web
spec:
  replicas: 3
  serviceName: sets-web
  selector:
    matchLabels:
      app: sets-web
  template:
    metadata:
      labels:
        app: sets-web
    spec:
      terminationGracePeriodSeconds: 1
      containers:
      - name: app
        image: busybox:1.36
        imagePullPolicy: IfNotPresent
        command: ["sh", "-c", "trap 'exit 0' TERM; while true; do sleep 1; done"]
        volumeMounts:
        - name: data
          mountPath: /data
  volumeClaimTemplates:
  - metadata:
      name: data
    spec:
      storageClassName: local-path
      accessModes: ["ReadWriteOnce"]
      resources:
        requests:
          storage: 16Mi
`

// TestSetsStatefulSet: pods start one at a time in ordinal order (checked
// from a watch), each with its own claim whose data survives the pod's
// deletion, and scale down from the highest ordinal, one at a time.
func TestSetsStatefulSet(t *testing.T) {
	e := startCluster(t)
	cs := e.server.Clientset
	ctx := context.Background()
	waitNodeReady(t, e, false)
	log := setsWatchPods(t, cs, "sets-web")
	k := newKubectl(t, e)
	k.must(setsSTSManifest, "apply", "-f", "-")
	stopClaims := setsSelectNodes(t, cs, "sets-web")
	t.Cleanup(stopClaims)

	t.Run("OrderedStart", func(t *testing.T) {
		out := k.must("", "rollout", "status", "statefulset/sets-web", "--timeout=180s")
		if !strings.Contains(out, "rolling update complete 3 pods") && !strings.Contains(out, "roll out complete") {
			t.Logf("kubectl rollout status:\n%s", out)
		}
		waitFor(t, 120*time.Second, "3 ready pods", func() (bool, error) { return setsReadyCount(t, cs, "sets-web") == 3, nil })
		got := log.filter("+", "ready")
		want := []string{"+sets-web-0", "ready sets-web-0", "+sets-web-1", "ready sets-web-1", "+sets-web-2", "ready sets-web-2"}
		if strings.Join(got, ",") != strings.Join(want, ",") {
			t.Fatalf("creation/readiness order = %v, want %v", got, want)
		}
		p, err := cs.CoreV1().Pods("default").Get(ctx, "sets-web-1", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if p.Spec.Hostname != "sets-web-1" || p.Spec.Subdomain != "sets-web" || p.Labels["apps.kubernetes.io/pod-index"] != "1" ||
			p.Labels["statefulset.kubernetes.io/pod-name"] != "sets-web-1" {
			t.Fatalf("identity of sets-web-1: hostname %q subdomain %q labels %v", p.Spec.Hostname, p.Spec.Subdomain, p.Labels)
		}
		setsWantEvent(t, cs, "StatefulSet", "sets-web", "SuccessfulCreate", "create Pod sets-web-0 in StatefulSet sets-web successful")
		setsWantEvent(t, cs, "StatefulSet", "sets-web", "SuccessfulCreate", "create Claim data-sets-web-0 Pod sets-web-0 in StatefulSet sets-web success")
	})
	t.Run("ClaimSurvivesPodDeletion", func(t *testing.T) { setsClaimSurvives(t, k.with(t), cs) })
	t.Run("RollingUpdateReverseOrder", func(t *testing.T) { setsSTSRollingUpdate(t, k.with(t), log) })
	t.Run("ScaleDownReverseOrder", func(t *testing.T) {
		n := len(log.filter("-", "gone"))
		k.must("", "scale", "statefulset/sets-web", "--replicas=1")
		waitFor(t, 120*time.Second, "1 pod left", func() (bool, error) {
			l, err := cs.CoreV1().Pods("default").List(ctx, metav1.ListOptions{LabelSelector: "app=sets-web"})
			return err == nil && len(l.Items) == 1 && l.Items[0].Name == "sets-web-0", err
		})
		got := log.filter("-", "gone")[n:]
		want := []string{"-sets-web-2", "gone sets-web-2", "-sets-web-1", "gone sets-web-1"}
		if strings.Join(got, ",") != strings.Join(want, ",") {
			t.Fatalf("deletion order = %v, want %v", got, want)
		}
		for _, c := range []string{"data-sets-web-1", "data-sets-web-2"} {
			if _, err := cs.CoreV1().PersistentVolumeClaims("default").Get(ctx, c, metav1.GetOptions{}); err != nil {
				t.Errorf("claim %s after scale down (Retain): %v", c, err)
			}
		}
	})
	k.must("", "delete", "statefulset", "sets-web", "--wait=false")
	waitFor(t, 60*time.Second, "pods gone", func() (bool, error) {
		l, err := cs.CoreV1().Pods("default").List(ctx, metav1.ListOptions{LabelSelector: "app=sets-web"})
		return err == nil && len(l.Items) == 0, err
	})
	k.must("", "delete", "pvc", "-l", "app=sets-web", "--wait=false")
}

// setsSTSRollingUpdate changes the image: pods are replaced from the
// highest ordinal down, and kubectl rollout status/history follow.
func setsSTSRollingUpdate(t *testing.T, k *kubectlRunner, log *setsPodLog) {
	n := len(log.filter("-"))
	k.must("", "set", "image", "statefulset/sets-web", "app=nginx:1.25")
	out := k.must("", "rollout", "status", "statefulset/sets-web", "--timeout=180s")
	// The API defaults rollingUpdate.partition to 0, so kubectl reports a partitioned roll out.
	if !strings.Contains(out, "partitioned roll out complete: 3 new pods have been updated") {
		t.Fatalf("kubectl rollout status:\n%s", out)
	}
	got := log.filter("-")[n:]
	want := []string{"-sets-web-2", "-sets-web-1", "-sets-web-0"}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("replacement order = %v, want %v", got, want)
	}
	if hist := k.must("", "rollout", "history", "statefulset/sets-web"); !setsHasLines(hist, "1", "2") {
		t.Fatalf("kubectl rollout history:\n%s", hist)
	}
	if out := k.must("", "exec", "sets-web-1", "--", "cat", "/data/marker"); strings.TrimSpace(out) != "keep-me" {
		t.Fatalf("data on the claim after the rolling update: %q", out)
	}
}

// setsClaimSurvives writes a file on sets-web-1's claim, deletes the pod
// and reads the file from its replacement.
func setsClaimSurvives(t *testing.T, k *kubectlRunner, cs kubernetes.Interface) {
	ctx := context.Background()
	k.must("", "exec", "sets-web-1", "--", "sh", "-c", "echo keep-me > /data/marker")
	old, err := cs.CoreV1().Pods("default").Get(ctx, "sets-web-1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := cs.CoreV1().Pods("default").Delete(ctx, "sets-web-1", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 120*time.Second, "sets-web-1 replaced and Ready", func() (bool, error) {
		p, err := cs.CoreV1().Pods("default").Get(ctx, "sets-web-1", metav1.GetOptions{})
		return err == nil && p.UID != old.UID && podReady(p), nil
	})
	if out := k.must("", "exec", "sets-web-1", "--", "cat", "/data/marker"); strings.TrimSpace(out) != "keep-me" {
		t.Fatalf("data on the claim after the pod's deletion: %q", out)
	}
	c, err := cs.CoreV1().PersistentVolumeClaims("default").Get(ctx, "data-sets-web-1", metav1.GetOptions{})
	if err != nil || c.Status.Phase != corev1.ClaimBound {
		t.Fatalf("claim data-sets-web-1: %v %+v", err, c)
	}
}

func setsReadyCount(t *testing.T, cs kubernetes.Interface, app string) int {
	t.Helper()
	l, err := cs.CoreV1().Pods("default").List(context.Background(), metav1.ListOptions{LabelSelector: "app=" + app})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for i := range l.Items {
		if l.Items[i].DeletionTimestamp == nil && podReady(&l.Items[i]) {
			n++
		}
	}
	return n
}

// setsPodLog is the sequence of pod events seen by a watch:
// "+name" added, "ready name" first Ready, "-name" deletion started, "gone name".
type setsPodLog struct {
	mu    sync.Mutex
	lines []string
	ready map[string]bool
}

func (l *setsPodLog) add(s string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, s)
}

// filter returns the lines with one of the prefixes.
func (l *setsPodLog) filter(prefixes ...string) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, s := range l.lines {
		for _, p := range prefixes {
			if strings.HasPrefix(s, p) {
				out = append(out, s)
				break
			}
		}
	}
	return out
}

func setsWatchPods(t *testing.T, cs kubernetes.Interface, app string) *setsPodLog {
	t.Helper()
	w, err := cs.CoreV1().Pods("default").Watch(context.Background(), metav1.ListOptions{LabelSelector: "app=" + app})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Stop)
	l := &setsPodLog{ready: map[string]bool{}}
	deleting := map[string]bool{}
	go func() {
		for ev := range w.ResultChan() {
			p, ok := ev.Object.(*corev1.Pod)
			if !ok {
				continue
			}
			key := p.Name + "/" + string(p.UID)
			switch {
			case ev.Type == watch.Added:
				l.add("+" + p.Name)
			case ev.Type == watch.Deleted:
				if !deleting[key] {
					l.add("-" + p.Name)
				}
				l.add("gone " + p.Name)
				continue
			}
			if p.DeletionTimestamp != nil && !deleting[key] {
				deleting[key] = true
				l.add("-" + p.Name)
			}
			if podReady(p) && !l.ready[key] {
				l.ready[key] = true
				l.add("ready " + p.Name)
			}
		}
	}()
	return l
}

// setsSelectNodes names each scheduled pod's node on its claims
// (volume.kubernetes.io/selected-node) if the scheduler has not, as
// storageEnsureSelectedNode does; it runs until the returned stop.
func setsSelectNodes(t *testing.T, cs kubernetes.Interface, app string) (stop func()) {
	const ann = "volume.kubernetes.io/selected-node"
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		noted := map[string]bool{}
		for ctx.Err() == nil {
			time.Sleep(2 * time.Second)
			pods, err := cs.CoreV1().Pods("default").List(ctx, metav1.ListOptions{LabelSelector: "app=" + app})
			if err != nil {
				continue
			}
			for _, p := range pods.Items {
				if p.Spec.NodeName == "" || time.Since(p.CreationTimestamp.Time) < 5*time.Second {
					continue
				}
				claim := fmt.Sprintf("data-%s", p.Name)
				c, err := cs.CoreV1().PersistentVolumeClaims("default").Get(ctx, claim, metav1.GetOptions{})
				if err != nil || c.Annotations[ann] != "" || c.Status.Phase == corev1.ClaimBound {
					continue
				}
				if !noted[claim] {
					noted[claim] = true
					t.Logf("NOTE: the scheduler did not set %s on claim %s; the test sets it to %s", ann, claim, p.Spec.NodeName)
				}
				if c.Annotations == nil {
					c.Annotations = map[string]string{}
				}
				c.Annotations[ann] = p.Spec.NodeName
				_, err = cs.CoreV1().PersistentVolumeClaims("default").Update(ctx, c, metav1.UpdateOptions{})
				if err != nil && !apierrors.IsConflict(err) && ctx.Err() == nil {
					t.Logf("annotating claim %s: %v", claim, err)
				}
			}
		}
	}()
	return func() { cancel(); <-done }
}
