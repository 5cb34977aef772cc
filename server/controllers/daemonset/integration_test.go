package daemonset

import (
	"context"
	"fmt"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"

	"github.com/orch/orch/server/controllers/kit/kittest"
)

func intOrStr(s string) *intstr.IntOrString {
	v := intstr.Parse(s)
	return &v
}

func testDS(name string) *appsv1.DaemonSet {
	lbls := map[string]string{"app": name}
	return &appsv1.DaemonSet{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec: appsv1.DaemonSetSpec{
			Selector: &metav1.LabelSelector{MatchLabels: lbls},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: lbls}, Spec: corev1.PodSpec{
				Containers: []corev1.Container{{Name: "c", Image: "busybox:1.36"}}}},
			UpdateStrategy: appsv1.DaemonSetUpdateStrategy{Type: appsv1.RollingUpdateDaemonSetStrategyType,
				RollingUpdate: &appsv1.RollingUpdateDaemonSet{}},
		},
	}
}

// startController runs the controller against a real in-process API server.
func startController(t *testing.T) kubernetes.Interface {
	t.Helper()
	client, _ := kittest.Run(t, New)
	return client
}

func addNode(t *testing.T, cs kubernetes.Interface, name string, taints ...corev1.Taint) {
	t.Helper()
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.NodeSpec{Taints: taints},
		Status: corev1.NodeStatus{Allocatable: corev1.ResourceList{corev1.ResourcePods: resource.MustParse("110")},
			Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}}}
	if _, err := cs.CoreV1().Nodes().Create(context.Background(), n, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// podsByNode lists the live pods of app by target node.
func podsByNode(t *testing.T, cs kubernetes.Interface, app string) map[string][]corev1.Pod {
	t.Helper()
	l, err := cs.CoreV1().Pods("default").List(context.Background(), metav1.ListOptions{LabelSelector: "app=" + app})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]corev1.Pod{}
	for _, p := range l.Items {
		if p.DeletionTimestamp == nil {
			out[targetNode(&p)] = append(out[targetNode(&p)], p)
		}
	}
	return out
}

// markReady binds and readies every pod of app and removes terminating
// ones (what scheduler and agent do).
func markReady(t *testing.T, cs kubernetes.Interface, app string) {
	t.Helper()
	ctx := context.Background()
	all, err := cs.CoreV1().Pods("default").List(ctx, metav1.ListOptions{LabelSelector: "app=" + app})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range all.Items {
		if p.DeletionTimestamp != nil {
			_ = cs.CoreV1().Pods("default").Delete(ctx, p.Name, metav1.DeleteOptions{GracePeriodSeconds: new(int64)})
		}
	}
	for node, pods := range podsByNode(t, cs, app) {
		for _, p := range pods {
			if p.Spec.NodeName == "" {
				b := &corev1.Binding{ObjectMeta: metav1.ObjectMeta{Name: p.Name}, Target: corev1.ObjectReference{Kind: "Node", Name: node}}
				_ = cs.CoreV1().Pods("default").Bind(ctx, b, metav1.CreateOptions{})
			}
			cur, err := cs.CoreV1().Pods("default").Get(ctx, p.Name, metav1.GetOptions{})
			if err != nil {
				continue // deleted meanwhile
			}
			cur.Status.Phase = corev1.PodRunning
			cur.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: metav1.Now()}}
			_, _ = cs.CoreV1().Pods("default").UpdateStatus(ctx, cur, metav1.UpdateOptions{})
		}
	}
}

func TestDaemonSetCoversEligibleNodes(t *testing.T) {
	cs := startController(t)
	ctx := context.Background()
	addNode(t, cs, "n1")
	addNode(t, cs, "n2")
	addNode(t, cs, "tainted", corev1.Taint{Key: "dedicated", Value: "x", Effect: corev1.TaintEffectNoSchedule})
	if _, err := cs.AppsV1().DaemonSets("default").Create(ctx, testDS("agent"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	kittest.Eventually(t, 45*time.Second, "one pod on n1 and n2", func() (bool, string) {
		m := podsByNode(t, cs, "agent")
		return len(m) == 2 && len(m["n1"]) == 1 && len(m["n2"]) == 1, fmt.Sprint(len(m))
	})
	addNode(t, cs, "n3")
	kittest.Eventually(t, 45*time.Second, "pod on new node n3", func() (bool, string) { return len(podsByNode(t, cs, "agent")["n3"]) == 1, "" })
	markReady(t, cs, "agent")
	kittest.Eventually(t, 45*time.Second, "status", func() (bool, string) {
		ds, _ := cs.AppsV1().DaemonSets("default").Get(ctx, "agent", metav1.GetOptions{})
		s := ds.Status
		return s.DesiredNumberScheduled == 3 && s.CurrentNumberScheduled == 3 && s.NumberReady == 3 &&
			s.NumberAvailable == 3 && s.UpdatedNumberScheduled == 3 && s.ObservedGeneration == ds.Generation, fmt.Sprintf("%+v", s)
	})
	if err := cs.CoreV1().Nodes().Delete(ctx, "n3", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	kittest.Eventually(t, 45*time.Second, "removed node's pod deleted", func() (bool, string) { return len(podsByNode(t, cs, "agent")["n3"]) == 0, "" })
}

func TestDaemonSetRollingUpdate(t *testing.T) {
	cs := startController(t)
	ctx := context.Background()
	for i := range 3 {
		addNode(t, cs, fmt.Sprintf("n%d", i))
	}
	ds := testDS("roll")
	ds.Spec.UpdateStrategy.RollingUpdate.MaxUnavailable = intOrStr("1")
	if _, err := cs.AppsV1().DaemonSets("default").Create(ctx, ds, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	kittest.Eventually(t, 45*time.Second, "3 pods", func() (bool, string) { return len(podsByNode(t, cs, "roll")) == 3, "" })
	markReady(t, cs, "roll")
	kittest.Update(t, cs.AppsV1().DaemonSets("default"), "roll", func(ds *appsv1.DaemonSet) { ds.Spec.Template.Spec.Containers[0].Image = "busybox:1.37" })
	for step := 0; step < 50; step++ {
		m := podsByNode(t, cs, "roll")
		updated := 0
		for _, ps := range m {
			for _, p := range ps {
				if p.Spec.Containers[0].Image == "busybox:1.37" {
					updated++
				}
			}
		}
		if updated == 3 && len(m) == 3 {
			break
		}
		if missing := 3 - len(m); missing > 1 {
			t.Fatalf("maxUnavailable 1 exceeded: %d nodes without a pod", missing)
		}
		time.Sleep(200 * time.Millisecond)
		markReady(t, cs, "roll")
	}
	kittest.Eventually(t, 45*time.Second, "rolled out", func() (bool, string) {
		markReady(t, cs, "roll")
		d, _ := cs.AppsV1().DaemonSets("default").Get(ctx, "roll", metav1.GetOptions{})
		return d.Status.UpdatedNumberScheduled == 3 && d.Status.NumberAvailable == 3, fmt.Sprintf("%+v", d.Status)
	})
}

func TestDaemonSetSurgeAndOnDelete(t *testing.T) {
	cs := startController(t)
	ctx := context.Background()
	addNode(t, cs, "n1")
	addNode(t, cs, "n2")
	ds := testDS("surge")
	ds.Spec.UpdateStrategy.RollingUpdate.MaxSurge = intOrStr("1")
	ds.Spec.UpdateStrategy.RollingUpdate.MaxUnavailable = intOrStr("0")
	if _, err := cs.AppsV1().DaemonSets("default").Create(ctx, ds, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	kittest.Eventually(t, 45*time.Second, "2 pods", func() (bool, string) { markReady(t, cs, "surge"); return len(podsByNode(t, cs, "surge")) == 2, "" })
	kittest.Update(t, cs.AppsV1().DaemonSets("default"), "surge", func(ds *appsv1.DaemonSet) { ds.Spec.Template.Spec.Containers[0].Image = "busybox:1.37" })
	// Surge: a node gets its new pod beside the old one, never both nodes at once.
	kittest.Eventually(t, 45*time.Second, "a surge pod", func() (bool, string) {
		m := podsByNode(t, cs, "surge")
		both := 0
		for _, ps := range m {
			if len(ps) == 2 {
				both++
			}
		}
		return both == 1 && len(m["n1"])+len(m["n2"]) == 3, fmt.Sprint(len(m["n1"]), len(m["n2"]))
	})
	kittest.Eventually(t, 45*time.Second, "surge rollout", func() (bool, string) {
		markReady(t, cs, "surge")
		d, _ := cs.AppsV1().DaemonSets("default").Get(ctx, "surge", metav1.GetOptions{})
		m := podsByNode(t, cs, "surge")
		return d.Status.UpdatedNumberScheduled == 2 && d.Status.NumberAvailable == 2 && len(m["n1"]) == 1 && len(m["n2"]) == 1,
			fmt.Sprintf("%+v", d.Status)
	})
	// OnDelete: a template change alone replaces nothing; a deleted pod comes back new.
	kittest.Update(t, cs.AppsV1().DaemonSets("default"), "surge", func(ds *appsv1.DaemonSet) {
		ds.Spec.UpdateStrategy = appsv1.DaemonSetUpdateStrategy{Type: appsv1.OnDeleteDaemonSetStrategyType}
		ds.Spec.Template.Spec.Containers[0].Image = "busybox:1.38"
	})
	time.Sleep(500 * time.Millisecond)
	m := podsByNode(t, cs, "surge")
	if m["n1"][0].Spec.Containers[0].Image != "busybox:1.37" || m["n2"][0].Spec.Containers[0].Image != "busybox:1.37" {
		t.Fatal("OnDelete replaced a pod")
	}
	if err := cs.CoreV1().Pods("default").Delete(ctx, m["n1"][0].Name, metav1.DeleteOptions{GracePeriodSeconds: new(int64)}); err != nil {
		t.Fatal(err)
	}
	kittest.Eventually(t, 45*time.Second, "n1 recreated at the new template", func() (bool, string) {
		ps := podsByNode(t, cs, "surge")["n1"]
		return len(ps) == 1 && ps[0].Spec.Containers[0].Image == "busybox:1.38", ""
	})
	if img := podsByNode(t, cs, "surge")["n2"][0].Spec.Containers[0].Image; img != "busybox:1.37" {
		t.Fatalf("n2 replaced under OnDelete: %s", img)
	}
	revs, err := cs.AppsV1().ControllerRevisions("default").List(ctx, metav1.ListOptions{LabelSelector: "app=surge"})
	if err != nil || len(revs.Items) != 3 {
		t.Fatalf("controller revisions: %v %d", err, len(revs.Items))
	}
}
