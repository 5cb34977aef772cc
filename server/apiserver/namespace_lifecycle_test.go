package apiserver

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/orch/orch/datastore"
	"github.com/orch/orch/server/registry"
)

// metaPut writes obj straight into the store under its resource's key.
func metaPut(t *testing.T, s *Server, group, resource string, obj runtime.Object) int64 {
	t.Helper()
	res := findResource(s.cfg.Resources, group, resource)
	m := objectMeta(obj)
	data, err := encodeStored(res, obj)
	if err != nil {
		t.Fatal(err)
	}
	key := res.Key(m.GetNamespace(), m.GetName())
	ctx := context.Background()
	if kv, err := s.cfg.Store.Get(ctx, key); err == nil {
		rev, err := s.cfg.Store.Update(ctx, key, data, kv.ModRevision)
		if err != nil {
			t.Fatal(err)
		}
		return rev
	}
	rev, err := s.cfg.Store.Create(ctx, key, data)
	if err != nil {
		t.Fatal(err)
	}
	return rev
}

func metaExists(s *Server, group, resource, ns, name string) bool {
	res := findResource(s.cfg.Resources, group, resource)
	_, err := s.cfg.Store.Get(context.Background(), res.Key(ns, name))
	return !errors.Is(err, datastore.ErrNotFound)
}

func metaEventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// startNamespaceLifecycle starts a bootstrapped test server running the
// namespace lifecycle loop until the test ends.
func startNamespaceLifecycle(t *testing.T) (*Server, context.Context) {
	t.Helper()
	s, _ := newMetaTestServer(t, nil)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	t.Cleanup(func() { cancel(); <-done })
	if err := s.Bootstrap(ctx); err != nil {
		t.Fatal(err)
	}
	go func() { defer close(done); s.RunNamespaceLifecycle(ctx) }()
	return s, ctx
}

func TestNamespaceLifecycle(t *testing.T) {
	s, ctx := startNamespaceLifecycle(t)

	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "doomed"},
		Spec: corev1.NamespaceSpec{Finalizers: []corev1.FinalizerName{corev1.FinalizerKubernetes}}}
	metaPut(t, s, "", "namespaces", ns)
	metaPut(t, s, "", "configmaps", &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cm", Namespace: "doomed"}})
	metaPut(t, s, "", "pods", &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "doomed"},
		Spec: corev1.PodSpec{NodeName: "n1"}})
	metaPut(t, s, "", "secrets", &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "held", Namespace: "doomed",
		Finalizers: []string{"example.com/hold"}}})
	metaPut(t, s, "", "configmaps", &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "other", Namespace: "default"}})
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "doomed"},
		Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}}}
	if _, err := s.createIfAbsent(ctx, findResource(s.cfg.Resources, "", "services"), svc, nil); err != nil {
		t.Fatal(err)
	}
	if n, _ := s.cfg.Store.Count(ctx, registry.ServiceIPsPrefix); n != 3 { // kubernetes, kube-dns, web
		t.Fatalf("%d service IPs reserved, want 3", n)
	}

	// Deleting the namespace, as the API's delete does: a deletionTimestamp.
	now := metav1.Now()
	ns.DeletionTimestamp = &now
	ns.Status.Phase = corev1.NamespaceTerminating
	metaPut(t, s, "", "namespaces", ns)

	metaEventually(t, "configmap and pod deleted", func() bool {
		return !metaExists(s, "", "configmaps", "doomed", "cm") && !metaExists(s, "", "pods", "doomed", "p")
	})
	metaEventually(t, "finalized secret marked deleted", func() bool {
		var sec corev1.Secret
		metaGetStored(t, s, "", "secrets", "doomed", "held", &sec)
		return sec.DeletionTimestamp != nil
	})
	if !metaExists(s, "", "namespaces", "", "doomed") {
		t.Fatal("namespace deleted while an object with a finalizer is left")
	}
	// The finalizer's owner lets go: the next periodic check finishes the namespace.
	var sec corev1.Secret
	kv := metaGetStored(t, s, "", "secrets", "doomed", "held", &sec)
	if _, _, err := s.cfg.Store.Delete(ctx, kv.Key, kv.ModRevision); err != nil {
		t.Fatal(err)
	}
	metaEventually(t, "namespace deleted", func() bool { return !metaExists(s, "", "namespaces", "", "doomed") })
	if n, _ := s.cfg.Store.Count(ctx, registry.ServiceIPsPrefix); n != 2 {
		t.Errorf("%d service IPs reserved after the namespace went, want 2 (kubernetes, kube-dns)", n)
	}
	if !metaExists(s, "", "configmaps", "default", "other") {
		t.Error("object of another namespace deleted")
	}
}

// TestNamespaceLifecycleOtherFinalizer keeps a namespace whose metadata
// finalizers are not empty, but removes the kubernetes spec finalizer.
func TestNamespaceLifecycleOtherFinalizer(t *testing.T) {
	s, _ := newMetaTestServer(t, nil)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	t.Cleanup(func() { cancel(); <-done })
	now := metav1.Now()
	metaPut(t, s, "", "namespaces", &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "held",
		Finalizers: []string{"example.com/x"}, DeletionTimestamp: &now},
		Spec: corev1.NamespaceSpec{Finalizers: []corev1.FinalizerName{corev1.FinalizerKubernetes}}})
	go func() { defer close(done); s.RunNamespaceLifecycle(ctx) }()
	metaEventually(t, "kubernetes finalizer removed", func() bool {
		var ns corev1.Namespace
		metaGetStored(t, s, "", "namespaces", "", "held", &ns)
		return len(ns.Spec.Finalizers) == 0
	})
	if !metaExists(s, "", "namespaces", "", "held") {
		t.Error("namespace with a metadata finalizer deleted")
	}
}

func TestNamespaceDeleteForbidden(t *testing.T) {
	for name, forbidden := range map[string]bool{
		"default": true, "kube-system": true, "kube-public": true, "kube-node-lease": false, "team-a": false,
	} {
		err := namespaceDeleteForbidden(name)
		if (err != nil) != forbidden || (err != nil && !apierrors.IsForbidden(err)) {
			t.Errorf("%s: %v", name, err)
		}
	}
	if got := namespaceDeleteForbidden("default").Error(); got != `namespaces "default" is forbidden: this namespace may not be deleted` {
		t.Errorf("message %q", got)
	}
}

func TestCheckNamespaceForCreate(t *testing.T) {
	s, _ := newMetaTestServer(t, nil)
	ctx := context.Background()
	now := metav1.Now()
	metaPut(t, s, "", "namespaces", &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "live"}})
	metaPut(t, s, "", "namespaces", &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "going", DeletionTimestamp: &now,
		Finalizers: []string{"x"}}})
	if err := s.checkNamespaceForCreate(ctx, "live"); err != nil {
		t.Errorf("live: %v", err)
	}
	if err := s.checkNamespaceForCreate(ctx, "missing"); !apierrors.IsNotFound(err) {
		t.Errorf("missing: %v", err)
	}
	err := s.checkNamespaceForCreate(ctx, "going")
	var st apierrors.APIStatus
	if !errors.As(err, &st) || st.Status().Code != http.StatusForbidden ||
		!apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause) {
		b, _ := json.Marshal(err)
		t.Errorf("going: %v %s", err, b)
	}
}

// TestNamespaceLifecyclePodsFirst: while a pod of a terminating namespace
// remains (held by a finalizer), nothing else in it is deleted; once the
// pod is gone, the rest goes (upstream's OrderedNamespaceDeletion).
func TestNamespaceLifecyclePodsFirst(t *testing.T) {
	s, ctx := startNamespaceLifecycle(t)
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "ordered"},
		Spec: corev1.NamespaceSpec{Finalizers: []corev1.FinalizerName{corev1.FinalizerKubernetes}}}
	metaPut(t, s, "", "namespaces", ns)
	metaPut(t, s, "", "pods", &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ordered",
		Finalizers: []string{"example.com/hold"}}})
	metaPut(t, s, "", "configmaps", &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cm", Namespace: "ordered"}})
	now := metav1.Now()
	ns.DeletionTimestamp, ns.Status.Phase = &now, corev1.NamespaceTerminating
	metaPut(t, s, "", "namespaces", ns)
	metaEventually(t, "the pod marked deleted", func() bool {
		var p corev1.Pod
		metaGetStored(t, s, "", "pods", "ordered", "p", &p)
		return p.DeletionTimestamp != nil
	})
	time.Sleep(200 * time.Millisecond) // a few more passes of the lifecycle loop
	if !metaExists(s, "", "configmaps", "ordered", "cm") {
		t.Fatal("the ConfigMap was deleted while a pod remained")
	}
	var p corev1.Pod
	kv := metaGetStored(t, s, "", "pods", "ordered", "p", &p)
	if _, _, err := s.cfg.Store.Delete(ctx, kv.Key, kv.ModRevision); err != nil {
		t.Fatal(err)
	}
	metaEventually(t, "the ConfigMap and the namespace deleted", func() bool {
		return !metaExists(s, "", "configmaps", "ordered", "cm") && !metaExists(s, "", "namespaces", "", "ordered")
	})
}
