package integration

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/orch/orch/test/testutil"
)

func init() {
	register("NamespaceDeletionRemovesContent", testNamespaceDeletion)
	register("WatchWithoutResourceVersionSendsCurrentState", testWatchInitialState)
	register("FieldValidationModes", testFieldValidation)
}

func testNamespaceDeletion(t *testing.T, s *testutil.Server) {
	ctx, cs := ctxT(t), s.Clientset
	name := "it-nsdel-" + fmt.Sprint(time.Now().UnixNano()%100000)
	_, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	must(t, err, "create namespace")
	t.Cleanup(func() { _ = cs.CoreV1().Namespaces().Delete(context.Background(), name, metav1.DeleteOptions{}) })
	for i := range 5 {
		_, err := cs.CoreV1().ConfigMaps(name).Create(ctx, cm(name, fmt.Sprintf("c%d", i), nil), metav1.CreateOptions{})
		must(t, err, "create configmap")
	}
	_, err = cs.CoreV1().Secrets(name).Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "s"}}, metav1.CreateOptions{})
	must(t, err, "create secret")
	must(t, cs.CoreV1().Namespaces().Delete(ctx, name, metav1.DeleteOptions{}), "delete namespace")
	err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		_, err := cs.CoreV1().Namespaces().Get(ctx, name, metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})
	if err != nil {
		n, _ := cs.CoreV1().Namespaces().Get(ctx, name, metav1.GetOptions{})
		t.Fatalf("namespace %s not gone 2 minutes after delete: %+v", name, n)
	}
	l, err := cs.CoreV1().ConfigMaps("").List(ctx, metav1.ListOptions{FieldSelector: "metadata.namespace=" + name})
	must(t, err, "list configmaps of the deleted namespace")
	sl, err := cs.CoreV1().Secrets("").List(ctx, metav1.ListOptions{FieldSelector: "metadata.namespace=" + name})
	must(t, err, "list secrets of the deleted namespace")
	if len(l.Items)+len(sl.Items) != 0 {
		t.Fatalf("deleted namespace left %d configmaps and %d secrets", len(l.Items), len(sl.Items))
	}
	_, err = cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	must(t, err, "re-create the namespace")
	l, err = cs.CoreV1().ConfigMaps(name).List(ctx, metav1.ListOptions{})
	must(t, err, "list")
	if len(l.Items) != 0 {
		t.Fatalf("re-created namespace holds %d old configmaps", len(l.Items))
	}
}

// testWatchInitialState: upstream answers a watch without resourceVersion
// (and with resourceVersion=0) with synthetic ADDED events for every
// existing object, then the changes.
func testWatchInitialState(t *testing.T, s *testutil.Server) {
	ctx, cs := ctxT(t), s.Clientset
	ns := newNamespace(t, cs)
	c := cs.CoreV1().ConfigMaps(ns)
	for _, n := range []string{"a", "b", "c"} {
		_, err := c.Create(ctx, cm(ns, n, nil), metav1.CreateOptions{})
		must(t, err, "create")
	}
	for _, rv := range []string{"", "0"} {
		w, err := c.Watch(ctx, metav1.ListOptions{ResourceVersion: rv})
		must(t, err, "watch rv=%q", rv)
		got := map[string]bool{}
		timeout := time.After(30 * time.Second)
	loop:
		for len(got) < 3 {
			select {
			case ev, ok := <-w.ResultChan():
				if !ok {
					break loop
				}
				if o, ok := ev.Object.(*corev1.ConfigMap); ok && ev.Type == watch.Added {
					got[o.Name] = true
				}
			case <-timeout:
				break loop
			}
		}
		w.Stop()
		if len(got) != 3 {
			t.Errorf("watch with resourceVersion=%q: initial ADDED events for %v, want a, b and c", rv, got)
		}
	}
}

func testFieldValidation(t *testing.T, s *testutil.Server) {
	ctx, cs := ctxT(t), s.Clientset
	ns := newNamespace(t, cs)
	base := "/api/v1/namespaces/" + ns + "/configmaps"
	body := func(name string) []byte {
		return []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"` + name + `"},"data":{"a":"b"},"bogus":1}`)
	}
	// Strict: 400 naming the field.
	r := raw(ctx, s, "POST", base+"?fieldValidation=Strict", "application/json", body("strict"))
	if r.code != 400 || r.status == nil || !contains(r.status.Message, "bogus") {
		t.Errorf("Strict with an unknown field: HTTP %d %q, want 400 naming bogus", r.code, r.body)
	}
	// Duplicate fields under Strict.
	dup := []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"dup","name":"dup2"}}`)
	r = raw(ctx, s, "POST", base+"?fieldValidation=Strict", "application/json", dup)
	if r.code != 400 || r.status == nil || !contains(r.status.Message, "duplicate field") {
		t.Errorf("Strict with a duplicate field: HTTP %d %q, want 400 naming the duplicate field", r.code, r.body)
	}
	// Ignore: created, field dropped.
	r = raw(ctx, s, "POST", base+"?fieldValidation=Ignore", "application/json", body("ignore"))
	if r.code != 201 {
		t.Errorf("Ignore with an unknown field: HTTP %d %q, want 201", r.code, r.body)
	}
	// Default (Warn): created with a warning naming the field.
	res := cs.CoreV1().RESTClient().Post().AbsPath(base).SetHeader("Content-Type", "application/json").Body(body("warn")).Do(ctx)
	must(t, res.Error(), "default fieldValidation with an unknown field")
	found := false
	for _, w := range res.Warnings() {
		found = found || contains(w.Text, "bogus")
	}
	if !found {
		t.Errorf("default fieldValidation: warnings %v do not name the unknown field", res.Warnings())
	}
	r = raw(ctx, s, "POST", base+"?fieldValidation=Sometimes", "application/json", body("bad-mode"))
	if r.code != 400 {
		t.Errorf("fieldValidation=Sometimes: HTTP %d, want 400", r.code)
	}
	l, err := cs.CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{})
	must(t, err, "list")
	if got := cmNames(l.Items); len(got) != 2 || got[0] != "ignore" || got[1] != "warn" {
		t.Errorf("configmaps after the field validation requests: %v, want [ignore warn]", got)
	}
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }
