package integration

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/orch/orch/test/testutil"
)

func TestMain(m *testing.M) { testutil.Main(m) }

// apiTest is one subtest of TestAPI; all share one server.
type apiTest struct {
	name string
	fn   func(t *testing.T, s *testutil.Server)
}

// apiTests is filled by init functions of the *_test.go files.
var apiTests []apiTest

func register(name string, fn func(t *testing.T, s *testutil.Server)) {
	apiTests = append(apiTests, apiTest{name, fn})
}

// TestAPI starts one server and runs every registered subtest against it in
// parallel. Each subtest works in its own namespace.
func TestAPI(t *testing.T) {
	// These tests pin down the API server's own semantics (status and scale
	// subresources, field selectors on pods bound to made-up nodes, …) on
	// objects the controllers would otherwise rewrite or collect; the
	// controllers have their own tests.
	s := testutil.StartServer(t, testutil.Options{Quiet: true, ExtraArgs: []string{"--disable-controller-manager"}})
	t.Run("group", func(t *testing.T) {
		for _, tc := range apiTests {
			t.Run(tc.name, func(t *testing.T) {
				t.Parallel()
				tc.fn(t, s)
			})
		}
	})
	if t.Failed() {
		t.Logf("--- server output (tail) ---\n%s", s.Output())
	}
}

// ctxT is a context ending a little before the test's deadline.
func ctxT(t *testing.T) context.Context {
	t.Helper()
	d, ok := t.Deadline()
	if !ok {
		d = time.Now().Add(10 * time.Minute)
	}
	ctx, cancel := context.WithDeadline(context.Background(), d.Add(-5*time.Second))
	t.Cleanup(cancel)
	return ctx
}

// newNamespace creates a namespace for one test and deletes it afterwards.
func newNamespace(t *testing.T, cs kubernetes.Interface) string {
	t.Helper()
	name := fmt.Sprintf("it-%s-%04x", sanitize(t.Name()), rand.IntN(0x10000))
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if _, err := cs.CoreV1().Namespaces().Create(context.Background(), ns, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create namespace %s: %v", name, err)
	}
	t.Cleanup(func() {
		err := cs.CoreV1().Namespaces().Delete(context.Background(), name, metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			t.Logf("cleanup: delete namespace %s: %v", name, err)
		}
	})
	return name
}

func sanitize(s string) string { return testutil.NameFor(s, 40) }

// must fails the test on err.
func must(t *testing.T, err error, what string, args ...any) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", fmt.Sprintf(what, args...), err)
	}
}

func cm(ns, name string, data map[string]string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, Data: data}
}

// statusOf returns the metav1.Status of an API error (nil if not one).
func statusOf(err error) *metav1.Status {
	if se, ok := err.(apierrors.APIStatus); ok {
		st := se.Status()
		return &st
	}
	return nil
}

// wantCode fails unless err is an API error with HTTP code.
func wantCode(t *testing.T, err error, code int32, what string) *metav1.Status {
	t.Helper()
	if err == nil {
		t.Fatalf("%s: got success, want HTTP %d", what, code)
	}
	st := statusOf(err)
	if st == nil {
		t.Fatalf("%s: got non-API error %v, want HTTP %d", what, err, code)
	}
	if st.Code != code {
		t.Fatalf("%s: got HTTP %d (%s: %s), want %d", what, st.Code, st.Reason, st.Message, code)
	}
	return st
}
