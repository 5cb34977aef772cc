package replicaset

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"go.uber.org/zap/zaptest"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/ptr"

	"github.com/orch/orch/server/controllers/kit"
)

func newRS(name string, replicas int32) *appsv1.ReplicaSet {
	l := map[string]string{"app": name}
	return &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", UID: types.UID("uid-" + name)},
		Spec: appsv1.ReplicaSetSpec{Replicas: ptr.To(replicas), Selector: &metav1.LabelSelector{MatchLabels: l},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: l},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "img"}}}}}}
}

// fakeController builds the controller on the fake clientset; its cache is
// filled by hand and never sees what the controller writes (a slow cache).
func fakeController(t *testing.T, objs ...runtime.Object) (*Controller, *fake.Clientset, *record.FakeRecorder) {
	client := fake.NewClientset(objs...)
	n := 0
	client.PrependReactor("create", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
		p := a.(k8stesting.CreateAction).GetObject().(*corev1.Pod)
		if p.Name == "" { // the fake has no generateName
			n++
			p.Name = fmt.Sprintf("%s%05d", p.GenerateName, n)
		}
		return false, nil, nil
	})
	kc := kit.New(client, zaptest.NewLogger(t), kit.Options{})
	c, err := New(kc)
	if err != nil {
		t.Fatal(err)
	}
	rec := record.NewFakeRecorder(100)
	c.recorder = rec
	for _, o := range objs {
		switch o := o.(type) {
		case *appsv1.ReplicaSet:
			_ = kc.Informers.Apps().V1().ReplicaSets().Informer().GetIndexer().Add(o)
		case *corev1.Pod:
			_ = kc.Informers.Core().V1().Pods().Informer().GetIndexer().Add(o)
		}
	}
	return c, client, rec
}

func countCreates(client *fake.Clientset) int {
	n := 0
	for _, a := range client.Actions() {
		if a.GetVerb() == "create" && a.GetResource().Resource == "pods" {
			n++
		}
	}
	return n
}

// TestExpectationsPreventDoubleCreate: a second sync before the cache shows
// the new pods creates nothing.
func TestExpectationsPreventDoubleCreate(t *testing.T) {
	rs := newRS("web", 3)
	c, client, rec := fakeController(t, rs)
	ctx := context.Background()
	for range 2 {
		if err := c.sync(ctx, "ns/web"); err != nil {
			t.Fatal(err)
		}
	}
	if n := countCreates(client); n != 3 {
		t.Fatalf("%d pods created, want 3", n)
	}
	pods, _ := client.CoreV1().Pods("ns").List(ctx, metav1.ListOptions{})
	for _, p := range pods.Items {
		ref := metav1.GetControllerOf(&p)
		if p.GenerateName != "web-" || ref == nil || ref.UID != rs.UID || !*ref.BlockOwnerDeletion || ref.Kind != "ReplicaSet" {
			t.Fatalf("pod generateName %q refs %+v", p.GenerateName, p.OwnerReferences)
		}
	}
	if ev := <-rec.Events; !strings.HasPrefix(ev, "Normal SuccessfulCreate Created pod: ") {
		t.Fatalf("event %q", ev)
	}
}

// TestCreateErrorSetsReplicaFailure: a refused create (e.g. quota) gives a
// FailedCreate event and the ReplicaFailure condition; slow start makes
// only one request.
func TestCreateErrorSetsReplicaFailure(t *testing.T) {
	rs := newRS("web", 3)
	c, client, rec := fakeController(t, rs)
	client.PrependReactor("create", "pods", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewForbidden(schema.GroupResource{Resource: "pods"}, "", errExceeded)
	})
	if err := c.sync(context.Background(), "ns/web"); err == nil {
		t.Fatal("sync succeeded")
	}
	if n := countCreates(client); n != 1 {
		t.Fatalf("%d create requests, want 1 (slow start)", n)
	}
	got, _ := client.AppsV1().ReplicaSets("ns").Get(context.Background(), "web", metav1.GetOptions{})
	cond := getCondition(got.Status, appsv1.ReplicaSetReplicaFailure)
	if cond == nil || cond.Reason != "FailedCreate" || !strings.Contains(cond.Message, "exceeded quota") {
		t.Fatalf("conditions %+v", got.Status.Conditions)
	}
	if ev := <-rec.Events; !strings.HasPrefix(ev, "Warning FailedCreate Error creating: ") {
		t.Fatalf("event %q", ev)
	}
	if !c.exp.Satisfied("ns/web") {
		t.Fatal("failed creations left expectations behind")
	}
}

// TestScaleDownDeletesLeastValuable: the pending pod and the not-ready one
// go, the ready ones stay; status counts what is left in the cache.
func TestScaleDownDeletesLeastValuable(t *testing.T) {
	rs := newRS("web", 2)
	mk := func(name string, opts ...podOpt) *corev1.Pod {
		p := mkPod(name, opts...)
		p.Labels = map[string]string{"app": "web"}
		p.OwnerReferences = []metav1.OwnerReference{ControllerRef(rs, Kind)}
		return p
	}
	ready := readySince(metav1.Now().Add(-3600e9))
	objs := []runtime.Object{rs, mk("web-ready1", ready), mk("web-pending", phase(corev1.PodPending)),
		mk("web-ready2", ready), mk("web-notready")}
	c, client, rec := fakeController(t, objs...)
	if err := c.sync(context.Background(), "ns/web"); err != nil {
		t.Fatal(err)
	}
	var deleted []string
	for _, a := range client.Actions() {
		if d, ok := a.(k8stesting.DeleteAction); ok {
			deleted = append(deleted, d.GetName())
		}
	}
	if len(deleted) != 2 || !contains(deleted, "web-pending") || !contains(deleted, "web-notready") {
		t.Fatalf("deleted %v", deleted)
	}
	if ev := <-rec.Events; !strings.HasPrefix(ev, "Normal SuccessfulDelete Deleted pod: web-") {
		t.Fatalf("event %q", ev)
	}
	got, _ := client.AppsV1().ReplicaSets("ns").Get(context.Background(), "web", metav1.GetOptions{})
	if st := got.Status; st.Replicas != 4 || st.ReadyReplicas != 2 || st.AvailableReplicas != 2 || st.FullyLabeledReplicas != 4 {
		t.Fatalf("status %+v", st)
	}
}

func contains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}
