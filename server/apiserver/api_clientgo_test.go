package apiserver

import (
	"context"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
)

func loopbackClient(t *testing.T, e *apiEnv) kubernetes.Interface {
	t.Helper()
	cs, err := kubernetes.NewForConfig(&rest.Config{Host: "http://orch-loopback", Transport: e.s.LoopbackTransport()})
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

func TestClientGoLoopback(t *testing.T) {
	e := newAPIEnv(t, 100, nil)
	cs := loopbackClient(t, e)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "default"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	cms := cs.CoreV1().ConfigMaps("default")
	w, err := cms.Watch(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	cm, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "a"}, Data: map[string]string{"k": "v"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case ev := <-w.ResultChan():
		if ev.Type != watch.Added || ev.Object.(*corev1.ConfigMap).Name != "a" {
			t.Fatalf("event %v", ev)
		}
	case <-ctx.Done():
		t.Fatal("no watch event")
	}
	stale := cm.DeepCopy()
	cm.Data["k"] = "v2"
	if _, err := cms.Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	stale.Data["k"] = "v3"
	if _, err := cms.Update(ctx, stale, metav1.UpdateOptions{}); !apierrors.IsConflict(err) {
		t.Fatalf("stale update: %v", err)
	}
	if _, err := cms.Patch(ctx, "a", types.StrategicMergePatchType, []byte(`{"data":{"p":"1"}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cms.Get(ctx, "nope", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("get missing: %v", err)
	}
	dep := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "d"}, Spec: appsv1.DeploymentSpec{
		Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "d"}},
		Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "d"}},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}}}}
	if _, err := cs.AppsV1().Deployments("default").Create(ctx, dep, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	sc, err := cs.AppsV1().Deployments("default").GetScale(ctx, "d", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	sc.Spec.Replicas = 4
	if _, err := cs.AppsV1().Deployments("default").UpdateScale(ctx, "d", sc, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := cms.Delete(ctx, "a", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	clientGoPodFlow(ctx, t, cs)
}

// clientGoPodFlow binds, updates the status of and evicts a pod through
// typed clients (protobuf bodies).
func clientGoPodFlow(ctx context.Context, t *testing.T, cs kubernetes.Interface) {
	pods := cs.CoreV1().Pods("default")
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p"}, Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}}
	if _, err := pods.Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := pods.Bind(ctx, &corev1.Binding{ObjectMeta: metav1.ObjectMeta{Name: "p"}, Target: corev1.ObjectReference{Kind: "Node", Name: "n1"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	got, err := pods.Get(ctx, "p", metav1.GetOptions{})
	if err != nil || got.Spec.NodeName != "n1" {
		t.Fatalf("bound pod %v %v", got.Spec.NodeName, err)
	}
	got.Status.Phase = corev1.PodRunning
	if _, err := pods.UpdateStatus(ctx, got, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	grace := int64(0)
	ev := &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Name: "p"}, DeleteOptions: &metav1.DeleteOptions{GracePeriodSeconds: &grace}}
	if err := pods.EvictV1(ctx, ev); err != nil {
		t.Fatal(err)
	}
	if _, err := pods.Get(ctx, "p", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("evicted pod still there: %v", err)
	}
}

func TestClientGoInformer(t *testing.T) {
	e := newAPIEnv(t, 100, nil)
	cs := loopbackClient(t, e)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	e.createNamespace("default")
	e.must(201, "POST", cmDefault, cmBody("pre", ""))
	f := informers.NewSharedInformerFactory(cs, 0)
	inf := f.Core().V1().ConfigMaps().Informer()
	added := make(chan string, 10)
	_, _ = inf.AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: func(obj interface{}) {
		added <- obj.(*corev1.ConfigMap).Name
	}})
	f.Start(ctx.Done())
	defer f.Shutdown()
	if !cache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
		t.Fatal("informer did not sync")
	}
	e.must(201, "POST", cmDefault, cmBody("post", ""))
	seen := map[string]bool{}
	for !seen["pre"] || !seen["post"] {
		select {
		case n := <-added:
			seen[n] = true
		case <-ctx.Done():
			t.Fatalf("informer saw %v", seen)
		}
	}
	cancel()
}

func TestClientGoMetadata(t *testing.T) {
	e := newAPIEnv(t, 100, nil)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	e.createNamespace("default")
	e.must(201, "POST", cmDefault, cmBody("m", `,"labels":{"k":"v"}`))
	mc, err := metadata.NewForConfig(&rest.Config{Host: "http://orch-loopback", Transport: e.s.LoopbackTransport()})
	if err != nil {
		t.Fatal(err)
	}
	gvr := corev1.SchemeGroupVersion.WithResource("configmaps")
	list, err := mc.Resource(gvr).Namespace("default").List(ctx, metav1.ListOptions{})
	if err != nil || len(list.Items) != 1 || list.Items[0].Labels["k"] != "v" {
		t.Fatalf("metadata list %v %v", list, err)
	}
	w, err := mc.Resource(gvr).Watch(ctx, metav1.ListOptions{ResourceVersion: list.ResourceVersion})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	e.must(200, "DELETE", cmDefault+"/m", "")
	ev := <-w.ResultChan()
	if p, ok := ev.Object.(*metav1.PartialObjectMetadata); ev.Type != watch.Deleted || !ok || p.Name != "m" {
		t.Fatalf("metadata watch event %v", ev)
	}
}

// An evicted pod gets the DisruptionTarget condition before it is deleted,
// as upstream's eviction subresource does; a pod kept by a finalizer shows it.
func TestEvictionAddsDisruptionTarget(t *testing.T) {
	e := newAPIEnv(t, 100, nil)
	cs := loopbackClient(t, e)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	e.createNamespace("default")
	pods := cs.CoreV1().Pods("default")
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "kept", Finalizers: []string{"example.com/keep"}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}}
	created, err := pods.Create(ctx, pod, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	stale := &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Name: "kept"},
		DeleteOptions: &metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: ptrUID("other")}}}
	if err := pods.EvictV1(ctx, stale); !apierrors.IsConflict(err) {
		t.Fatalf("eviction with a wrong uid precondition: %v, want a conflict", err)
	}
	ev := &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Name: "kept"},
		DeleteOptions: &metav1.DeleteOptions{Preconditions: &metav1.Preconditions{ResourceVersion: &created.ResourceVersion}}}
	if err := pods.EvictV1(ctx, ev); err != nil {
		t.Fatal(err)
	}
	got, err := pods.Get(ctx, "kept", metav1.GetOptions{})
	if err != nil || got.DeletionTimestamp == nil {
		t.Fatalf("evicted pod kept by a finalizer: %v, deletionTimestamp %v", err, got.DeletionTimestamp)
	}
	var cond *corev1.PodCondition
	for i := range got.Status.Conditions {
		if got.Status.Conditions[i].Type == corev1.DisruptionTarget {
			cond = &got.Status.Conditions[i]
		}
	}
	if cond == nil || cond.Status != corev1.ConditionTrue || cond.Reason != "EvictionByEvictionAPI" || cond.Message != "Eviction API: evicting" {
		t.Fatalf("DisruptionTarget condition: %+v", cond)
	}
}

func ptrUID(s string) *types.UID { u := types.UID(s); return &u }
