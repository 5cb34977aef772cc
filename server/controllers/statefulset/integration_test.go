package statefulset

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/orch/orch/server/controllers/kit/kittest"
)

func startController(t *testing.T) kubernetes.Interface {
	t.Helper()
	client, _ := kittest.Run(t, New)
	return client
}

func testSet(name string, replicas int32) *appsv1.StatefulSet {
	lbls := map[string]string{"app": name}
	return &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec: appsv1.StatefulSetSpec{
			Replicas: ptr.To(replicas), ServiceName: name,
			Selector: &metav1.LabelSelector{MatchLabels: lbls},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: lbls}, Spec: corev1.PodSpec{
				Containers: []corev1.Container{{Name: "c", Image: "busybox:1.36"}}}},
			VolumeClaimTemplates: []corev1.PersistentVolumeClaim{{ObjectMeta: metav1.ObjectMeta{Name: "data"},
				Spec: corev1.PersistentVolumeClaimSpec{AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
					Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Mi")}}}}},
		},
	}
}

// kubelet plays scheduler and agent: live pods become Running and Ready,
// terminating ones disappear. It returns the live pod names, sorted.
func kubelet(t *testing.T, cs kubernetes.Interface, app string) []string {
	t.Helper()
	ctx := context.Background()
	l, err := cs.CoreV1().Pods("default").List(ctx, metav1.ListOptions{LabelSelector: "app=" + app})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range l.Items {
		if p.DeletionTimestamp != nil {
			_ = cs.CoreV1().Pods("default").Delete(ctx, p.Name, metav1.DeleteOptions{GracePeriodSeconds: new(int64)})
			continue
		}
		names = append(names, p.Name)
		if p.Status.Phase == corev1.PodRunning {
			continue
		}
		p.Status.Phase = corev1.PodRunning
		p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: metav1.Now()}}
		_, _ = cs.CoreV1().Pods("default").UpdateStatus(ctx, &p, metav1.UpdateOptions{})
	}
	sort.Strings(names)
	return names
}

// podEvents records the order pods are added and deleted in, from a watch.
func podEvents(t *testing.T, cs kubernetes.Interface, app string) func() []string {
	t.Helper()
	w, err := cs.CoreV1().Pods("default").Watch(context.Background(), metav1.ListOptions{LabelSelector: "app=" + app})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Stop)
	ch := make(chan []string, 1)
	ch <- nil
	go func() {
		for ev := range w.ResultChan() {
			p, ok := ev.Object.(*corev1.Pod)
			if !ok {
				continue
			}
			log := <-ch
			switch {
			case ev.Type == "ADDED":
				log = append(log, "+"+p.Name)
			case (ev.Type == "DELETED" || p.DeletionTimestamp != nil) && !contains(log, "-"+p.Name):
				log = append(log, "-"+p.Name)
			}
			ch <- log
		}
	}()
	return func() []string { l := <-ch; ch <- l; return append([]string(nil), l...) }
}

func contains(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}

func TestOrderedReadyScaleUpDownAndClaims(t *testing.T) {
	cs := startController(t)
	ctx := context.Background()
	events := podEvents(t, cs, "web")
	if _, err := cs.AppsV1().StatefulSets("default").Create(ctx, testSet("web", 3), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// Only web-0 until it is ready.
	kittest.Eventually(t, 45*time.Second, "web-0", func() (bool, string) { l := events(); return len(l) == 1, fmt.Sprint(l) })
	time.Sleep(300 * time.Millisecond)
	if l := events(); len(l) != 1 {
		t.Fatalf("created before web-0 was ready: %v", l)
	}
	kittest.Eventually(t, 45*time.Second, "3 pods", func() (bool, string) { n := kubelet(t, cs, "web"); return len(n) == 3, fmt.Sprint(n) })
	if got := strings.Join(events(), " "); got != "+web-0 +web-1 +web-2" {
		t.Fatalf("creation order %q", got)
	}
	pod, err := cs.CoreV1().Pods("default").Get(ctx, "web-1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if pod.Spec.Hostname != "web-1" || pod.Spec.Subdomain != "web" || pod.Labels[appsv1.PodIndexLabel] != "1" ||
		pod.Labels[appsv1.StatefulSetPodNameLabel] != "web-1" || pod.Spec.Volumes[0].PersistentVolumeClaim.ClaimName != "data-web-1" {
		t.Fatalf("identity: %+v %+v", pod.Labels, pod.Spec)
	}
	for i := range 3 {
		if _, err := cs.CoreV1().PersistentVolumeClaims("default").Get(ctx, fmt.Sprintf("data-web-%d", i), metav1.GetOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	kittest.Eventually(t, 45*time.Second, "status", func() (bool, string) {
		s, _ := cs.AppsV1().StatefulSets("default").Get(ctx, "web", metav1.GetOptions{})
		st := s.Status
		return st.Replicas == 3 && st.ReadyReplicas == 3 && st.AvailableReplicas == 3 && st.UpdatedReplicas == 3 &&
			st.CurrentRevision != "" && st.CurrentRevision == st.UpdateRevision, fmt.Sprintf("%+v", st)
	})
	// Scale down to 1: web-2, then web-1.
	kittest.Update(t, cs.AppsV1().StatefulSets("default"), "web", func(s *appsv1.StatefulSet) {
		s.Spec.Replicas = ptr.To[int32](1)
	})
	kittest.Eventually(t, 45*time.Second, "scaled to 1", func() (bool, string) { n := kubelet(t, cs, "web"); return len(n) == 1, fmt.Sprint(n) })
	if got := strings.Join(events()[3:], " "); got != "-web-2 -web-1" {
		t.Fatalf("deletion order %q", got)
	}
	// Claims are kept (Retain).
	if _, err := cs.CoreV1().PersistentVolumeClaims("default").Get(ctx, "data-web-2", metav1.GetOptions{}); err != nil {
		t.Fatalf("claim of scaled-down pod: %v", err)
	}
}

func TestRollingUpdateWithPartition(t *testing.T) {
	cs := startController(t)
	ctx := context.Background()
	set := testSet("db", 3)
	set.Spec.PodManagementPolicy = appsv1.ParallelPodManagement
	set.Spec.VolumeClaimTemplates = nil
	if _, err := cs.AppsV1().StatefulSets("default").Create(ctx, set, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	kittest.Eventually(t, 45*time.Second, "3 pods", func() (bool, string) { n := kubelet(t, cs, "db"); return len(n) == 3, fmt.Sprint(n) })
	kittest.Update(t, cs.AppsV1().StatefulSets("default"), "db", func(s *appsv1.StatefulSet) {
		s.Spec.Template.Spec.Containers[0].Image = "busybox:1.37"
		s.Spec.UpdateStrategy.RollingUpdate = &appsv1.RollingUpdateStatefulSetStrategy{Partition: ptr.To[int32](1)}
	})
	images := func() string {
		var out []string
		for _, n := range kubelet(t, cs, "db") {
			p, err := cs.CoreV1().Pods("default").Get(ctx, n, metav1.GetOptions{})
			if err == nil {
				out = append(out, n+"="+p.Spec.Containers[0].Image)
			}
		}
		return strings.Join(out, " ")
	}
	want := "db-0=busybox:1.36 db-1=busybox:1.37 db-2=busybox:1.37"
	kittest.Eventually(t, 45*time.Second, "partitioned update", func() (bool, string) { got := images(); return got == want, got })
	kittest.Eventually(t, 45*time.Second, "status", func() (bool, string) {
		s, _ := cs.AppsV1().StatefulSets("default").Get(ctx, "db", metav1.GetOptions{})
		st := s.Status
		return st.UpdatedReplicas == 2 && st.CurrentReplicas == 1 && st.CurrentRevision != st.UpdateRevision, fmt.Sprintf("%+v", st)
	})
	// A deleted pod below the partition comes back at the current revision.
	if err := cs.CoreV1().Pods("default").Delete(ctx, "db-0", metav1.DeleteOptions{GracePeriodSeconds: new(int64)}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond)
	kittest.Eventually(t, 45*time.Second, "db-0 recreated old", func() (bool, string) { got := images(); return got == want, got })
	kittest.Update(t, cs.AppsV1().StatefulSets("default"), "db", func(s *appsv1.StatefulSet) {
		s.Spec.UpdateStrategy.RollingUpdate.Partition = ptr.To[int32](0)
	})
	kittest.Eventually(t, 45*time.Second, "complete", func() (bool, string) {
		images()
		s, _ := cs.AppsV1().StatefulSets("default").Get(ctx, "db", metav1.GetOptions{})
		st := s.Status
		return st.UpdatedReplicas == 3 && st.CurrentRevision == st.UpdateRevision && st.ReadyReplicas == 3, fmt.Sprintf("%+v", st)
	})
}

func TestParallelAndClaimRetention(t *testing.T) {
	cs := startController(t)
	ctx := context.Background()
	set := testSet("par", 3)
	set.Spec.PodManagementPolicy = appsv1.ParallelPodManagement
	set.Spec.PersistentVolumeClaimRetentionPolicy = &appsv1.StatefulSetPersistentVolumeClaimRetentionPolicy{
		WhenDeleted: appsv1.DeletePersistentVolumeClaimRetentionPolicyType, WhenScaled: appsv1.DeletePersistentVolumeClaimRetentionPolicyType}
	created, err := cs.AppsV1().StatefulSets("default").Create(ctx, set, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// Parallel: all three exist before any is ready.
	kittest.Eventually(t, 45*time.Second, "3 pods at once", func() (bool, string) {
		l, _ := cs.CoreV1().Pods("default").List(ctx, metav1.ListOptions{LabelSelector: "app=par"})
		return len(l.Items) == 3, fmt.Sprint(len(l.Items))
	})
	c, err := cs.CoreV1().PersistentVolumeClaims("default").Get(ctx, "data-par-2", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !ownedBy(c, created.UID) || c.Labels["app"] != "par" {
		t.Fatalf("whenDeleted Delete: claim owners %+v labels %v", c.OwnerReferences, c.Labels)
	}
	kubelet(t, cs, "par")
	pod2, err := cs.CoreV1().Pods("default").Get(ctx, "par-2", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	kittest.Update(t, cs.AppsV1().StatefulSets("default"), "par", func(s *appsv1.StatefulSet) {
		s.Spec.Replicas = ptr.To[int32](2)
	})
	kittest.Eventually(t, 45*time.Second, "par-2's claim handed to the pod", func() (bool, string) {
		c, err := cs.CoreV1().PersistentVolumeClaims("default").Get(ctx, "data-par-2", metav1.GetOptions{})
		return err == nil && ownedBy(c, pod2.UID), fmt.Sprint(err)
	})
	kittest.Eventually(t, 45*time.Second, "scaled to 2", func() (bool, string) { n := kubelet(t, cs, "par"); return len(n) == 2, fmt.Sprint(n) })
}
