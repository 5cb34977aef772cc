package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// setsDSManifest is a DaemonSet of busybox pods that stop at once on SIGTERM.
const setsDSManifest = `apiVersion: apps/v1
kind: DaemonSet
metadata:
  name: sets-ds
spec:
  selector:
    matchLabels:
      app: sets-ds
  updateStrategy:
    type: RollingUpdate
    rollingUpdate:
      maxUnavailable: 1
  template:
    metadata:
      labels:
        app: sets-ds
    spec:
      terminationGracePeriodSeconds: 1
      containers:
      - name: app
        image: busybox:1.36
        imagePullPolicy: IfNotPresent
        command: ["sh", "-c", "trap 'exit 0' TERM; while true; do sleep 1; done"]
`

// TestSetsDaemonSet: a DaemonSet covers the real node and an API-only
// Node (whose pod is created but never started), drops the pod of a removed
// node, rolls an image update out with kubectl and rolls it back.
func TestSetsDaemonSet(t *testing.T) {
	e := startCluster(t)
	cs := e.server.Clientset
	ctx := context.Background()
	waitNodeReady(t, e, false)
	fake := "sets-fake-" + e.id
	setsCreateFakeNode(t, cs, fake)
	k := newKubectl(t, e)
	k.must(setsDSManifest, "apply", "-f", "-")

	t.Run("CoversNodes", func(t *testing.T) {
		waitFor(t, 60*time.Second, "a daemon pod per node", func() (bool, error) {
			m := setsDSPods(t, cs)
			return len(m[e.node]) == 1 && len(m[fake]) == 1, nil
		})
		p := setsDSPods(t, cs)[fake][0]
		if !setsHasDefaultTolerations(p.Spec.Tolerations) || p.Labels["controller-revision-hash"] == "" || p.Labels["pod-template-generation"] != "1" {
			t.Fatalf("daemon pod %s: labels %v tolerations %+v", p.Name, p.Labels, p.Spec.Tolerations)
		}
		waitFor(t, 60*time.Second, "the real node's daemon pod Ready", func() (bool, error) {
			ps := setsDSPods(t, cs)[e.node]
			return len(ps) == 1 && podReady(&ps[0]), nil
		})
	})
	t.Run("RemovedNodeLosesPod", func(t *testing.T) {
		if err := cs.CoreV1().Nodes().Delete(ctx, fake, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		waitFor(t, 60*time.Second, "the removed node's pod gone", func() (bool, error) {
			return len(setsDSPods(t, cs)[fake]) == 0, nil
		})
		out := k.must("", "rollout", "status", "daemonset/sets-ds", "--timeout=90s")
		if !strings.Contains(out, `daemon set "sets-ds" successfully rolled out`) {
			t.Fatalf("kubectl rollout status:\n%s", out)
		}
		ds, err := cs.AppsV1().DaemonSets("default").Get(ctx, "sets-ds", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if s := ds.Status; s.DesiredNumberScheduled != 1 || s.CurrentNumberScheduled != 1 || s.NumberReady != 1 ||
			s.NumberAvailable != 1 || s.UpdatedNumberScheduled != 1 || s.NumberMisscheduled != 0 || s.ObservedGeneration != ds.Generation {
			t.Fatalf("status %+v", s)
		}
	})
	t.Run("RollingUpdateHistoryUndo", func(t *testing.T) { setsDSRollingUpdate(t, k.with(t), cs, e.node) })
	t.Run("Events", func(t *testing.T) {
		setsWantEvent(t, cs, "DaemonSet", "sets-ds", "SuccessfulCreate", "Created pod: sets-ds-")
		setsWantEvent(t, cs, "DaemonSet", "sets-ds", "SuccessfulDelete", "Deleted pod: sets-ds-")
	})
	k.must("", "delete", "daemonset", "sets-ds", "--wait=false")
	waitFor(t, 60*time.Second, "daemon pods gone", func() (bool, error) { return len(setsDSPods(t, cs)) == 0, nil })
}

func setsDSRollingUpdate(t *testing.T, k *kubectlRunner, cs kubernetes.Interface, node string) {
	before := setsDSPods(t, cs)[node][0]
	k.must("", "set", "image", "daemonset/sets-ds", "app=nginx:1.25")
	out := k.must("", "rollout", "status", "daemonset/sets-ds", "--timeout=90s")
	if !strings.Contains(out, "successfully rolled out") {
		t.Fatalf("kubectl rollout status:\n%s", out)
	}
	after := setsDSPods(t, cs)[node]
	if len(after) != 1 || after[0].UID == before.UID || after[0].Spec.Containers[0].Image != "nginx:1.25" ||
		after[0].Labels["pod-template-generation"] != "2" || after[0].Labels["controller-revision-hash"] == before.Labels["controller-revision-hash"] {
		t.Fatalf("after the update: %+v", after)
	}
	hist := k.must("", "rollout", "history", "daemonset/sets-ds")
	if !setsHasLines(hist, "1", "2") {
		t.Fatalf("kubectl rollout history:\n%s", hist)
	}
	k.must("", "rollout", "undo", "daemonset/sets-ds")
	k.must("", "rollout", "status", "daemonset/sets-ds", "--timeout=90s")
	waitFor(t, 60*time.Second, "the old image back", func() (bool, error) {
		ps := setsDSPods(t, cs)[node]
		return len(ps) == 1 && ps[0].Spec.Containers[0].Image == "busybox:1.36" && podReady(&ps[0]), nil
	})
	hist = k.must("", "rollout", "history", "daemonset/sets-ds")
	if !setsHasLines(hist, "2", "3") || setsHasLines(hist, "1") {
		t.Fatalf("kubectl rollout history after undo (revision 1 becomes 3):\n%s", hist)
	}
}

// setsHasLines: every rev starts a line of kubectl rollout history.
func setsHasLines(out string, revs ...string) bool {
	for _, rev := range revs {
		found := false
		for _, l := range strings.Split(out, "\n") {
			f := strings.Fields(l)
			found = found || (len(f) > 0 && f[0] == rev)
		}
		if !found {
			return false
		}
	}
	return true
}

// setsCreateFakeNode registers an API-only Ready Node; removed at the end.
func setsCreateFakeNode(t *testing.T, cs kubernetes.Interface, name string) {
	t.Helper()
	res := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2"), corev1.ResourceMemory: resource.MustParse("2Gi"),
		corev1.ResourcePods: resource.MustParse("110")}
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"kubernetes.io/hostname": name}},
		Status: corev1.NodeStatus{Capacity: res, Allocatable: res, Conditions: []corev1.NodeCondition{{
			Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady",
			LastHeartbeatTime: metav1.Now(), LastTransitionTime: metav1.Now()}}}}
	if _, err := cs.CoreV1().Nodes().Create(context.Background(), n, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		err := cs.CoreV1().Nodes().Delete(context.Background(), name, metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			t.Logf("deleting node %s: %v", name, err)
		}
	})
}

// setsDSPods lists the live daemon pods by the node they are on or pinned to.
func setsDSPods(t *testing.T, cs kubernetes.Interface) map[string][]corev1.Pod {
	t.Helper()
	l, err := cs.CoreV1().Pods("default").List(context.Background(), metav1.ListOptions{LabelSelector: "app=sets-ds"})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]corev1.Pod{}
	for _, p := range l.Items {
		if p.DeletionTimestamp != nil {
			continue
		}
		node := p.Spec.NodeName
		if a := p.Spec.Affinity; node == "" && a != nil && a.NodeAffinity != nil && a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution != nil {
			for _, term := range a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms {
				for _, f := range term.MatchFields {
					if f.Key == "metadata.name" && len(f.Values) == 1 {
						node = f.Values[0]
					}
				}
			}
		}
		out[node] = append(out[node], p)
	}
	return out
}

func setsHasDefaultTolerations(tols []corev1.Toleration) bool {
	want := map[string]corev1.TaintEffect{"node.kubernetes.io/not-ready": corev1.TaintEffectNoExecute,
		"node.kubernetes.io/unreachable": corev1.TaintEffectNoExecute, "node.kubernetes.io/disk-pressure": corev1.TaintEffectNoSchedule,
		"node.kubernetes.io/memory-pressure": corev1.TaintEffectNoSchedule, "node.kubernetes.io/pid-pressure": corev1.TaintEffectNoSchedule,
		"node.kubernetes.io/unschedulable": corev1.TaintEffectNoSchedule}
	for _, tol := range tols {
		if want[tol.Key] == tol.Effect && tol.Operator == corev1.TolerationOpExists && tol.TolerationSeconds == nil {
			delete(want, tol.Key)
		}
	}
	return len(want) == 0
}

// setsWantEvent waits for an Event of the object with reason and a message prefix.
func setsWantEvent(t *testing.T, cs kubernetes.Interface, kind, name, reason, prefix string) {
	t.Helper()
	var seen []string
	waitFor(t, 30*time.Second, fmt.Sprintf("%s event %q on %s/%s", reason, prefix, kind, name), func() (bool, error) {
		l, err := cs.CoreV1().Events("default").List(context.Background(), metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		seen = seen[:0]
		for _, ev := range l.Items {
			if ev.InvolvedObject.Kind == kind && ev.InvolvedObject.Name == name {
				seen = append(seen, ev.Reason+": "+ev.Message)
				if ev.Reason == reason && strings.HasPrefix(ev.Message, prefix) {
					return true, nil
				}
			}
		}
		return false, nil
	})
}
