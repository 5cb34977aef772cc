package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/orch/orch/test/testutil"
)

func init() {
	register("BadInputLeavesStoreUntouched", testBadInput)
	register("TerminatingNamespaceForbidsCreate", testTerminatingNamespace)
}

// rawResult is the answer to a hand-built request.
type rawResult struct {
	code   int
	status *metav1.Status
	body   string
	err    error
}

// raw sends body to path with the admin credentials.
func raw(ctx context.Context, s *testutil.Server, method, path, contentType string, body []byte) rawResult {
	path, query, _ := strings.Cut(path, "?")
	req := s.Clientset.CoreV1().RESTClient().Verb(method).AbsPath(path).SetHeader("Content-Type", contentType)
	if query != "" {
		q, _ := url.ParseQuery(query)
		for k, vs := range q {
			for _, v := range vs {
				req = req.Param(k, v)
			}
		}
	}
	if body != nil {
		req = req.Body(body)
	}
	var r rawResult
	res := req.Do(ctx)
	res.StatusCode(&r.code)
	b, err := res.Raw()
	r.body, r.err = string(b), err
	var st metav1.Status
	if r.code >= 300 && json.Unmarshal(b, &st) == nil && st.Kind == "Status" {
		r.status = &st
	}
	return r
}

type badCase struct {
	name        string
	method      string
	path        string // relative to /api/v1/namespaces/<ns>
	contentType string
	body        string
	codes       []int    // acceptable HTTP codes
	mention     []string // the Status (message or causes) must mention each
}

func badCases(ns string) []badCase {
	cmJSON := func(meta, rest string) string {
		return fmt.Sprintf(`{"apiVersion":"v1","kind":"ConfigMap","metadata":%s%s}`, meta, rest)
	}
	big := strings.Repeat("x", 3*1024*1024+512*1024)
	return []badCase{
		{"malformed JSON", "POST", "/configmaps", "application/json", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x"`, []int{400}, nil},
		{"malformed YAML", "POST", "/configmaps", "application/yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: [x\n", []int{400, 415}, nil},
		{"empty body", "POST", "/configmaps", "application/json", "", []int{400}, nil},
		{"unsupported media type", "POST", "/configmaps", "text/plain", cmJSON(`{"name":"x"}`, ""), []int{415}, nil},
		{"invalid name", "POST", "/configmaps", "application/json", cmJSON(`{"name":"Bad_Name"}`, ""), []int{422}, []string{"metadata.name"}},
		{"name too long", "POST", "/configmaps", "application/json", cmJSON(fmt.Sprintf(`{"name":"%s"}`, strings.Repeat("a", 254)), ""), []int{422}, []string{"metadata.name"}},
		{"missing name", "POST", "/configmaps", "application/json", cmJSON(`{}`, ""), []int{422}, []string{"name"}},
		{"invalid label value", "POST", "/configmaps", "application/json", cmJSON(`{"name":"x","labels":{"a":"-bad-"}}`, ""), []int{422}, []string{"metadata.labels"}},
		{"invalid data key", "POST", "/configmaps", "application/json", cmJSON(`{"name":"x"}`, `,"data":{"bad key!":"v"}`), []int{422}, []string{"data"}},
		{"wrong type in data", "POST", "/configmaps", "application/json", cmJSON(`{"name":"x"}`, `,"data":{"a":5}`), []int{400}, nil},
		{"wrong type for metadata", "POST", "/configmaps", "application/json", `{"apiVersion":"v1","kind":"ConfigMap","metadata":"x"}`, []int{400}, nil},
		{"unknown field strict", "POST", "/configmaps?fieldValidation=Strict", "application/json", cmJSON(`{"name":"x"}`, `,"datta":{"a":"b"}`), []int{400}, []string{"datta"}},
		{"unknown nested field strict", "POST", "/configmaps?fieldValidation=Strict", "application/json", cmJSON(`{"name":"x","labelz":{"a":"b"}}`, ""), []int{400}, []string{"labelz"}},
		{"kind mismatch", "POST", "/configmaps", "application/json", `{"apiVersion":"v1","kind":"Secret","metadata":{"name":"x"}}`, []int{400}, nil},
		{"namespace mismatch", "POST", "/configmaps", "application/json", cmJSON(`{"name":"x","namespace":"other-ns"}`, ""), []int{400}, []string{"namespace"}},
		{"oversized body", "POST", "/configmaps", "application/json", cmJSON(`{"name":"x"}`, `,"data":{"a":"`+big+`"}`), []int{413}, nil},
		{"configmap over 1MiB", "POST", "/configmaps", "application/json", cmJSON(`{"name":"x"}`, `,"data":{"a":"`+big[:1100*1024]+`"}`), []int{422}, []string{"1048576"}},
		{"update name mismatch", "PUT", "/configmaps/keep", "application/json", cmJSON(`{"name":"other"}`, ""), []int{400}, nil},
		{"update stale", "PUT", "/configmaps/keep", "application/json", cmJSON(`{"name":"keep","resourceVersion":"1"}`, `,"data":{"k":"stale"}`), []int{409}, nil},
		{"update invalid", "PUT", "/configmaps/keep", "application/json", cmJSON(`{"name":"keep","labels":{"a":"-bad-"}}`, ""), []int{422}, []string{"metadata.labels"}},
		{"update missing", "PUT", "/configmaps/nope", "application/json", cmJSON(`{"name":"nope"}`, ""), []int{404, 201}, nil},
		{"malformed merge patch", "PATCH", "/configmaps/keep", "application/merge-patch+json", `{"data":`, []int{400}, nil},
		{"unknown patch type", "PATCH", "/configmaps/keep", "application/bogus-patch", `{}`, []int{415}, nil},
		{"patch to invalid", "PATCH", "/configmaps/keep", "application/merge-patch+json", `{"metadata":{"name":"renamed"}}`, []int{400, 409, 422}, nil},
		{"missing namespace create", "POST", "/../nonexistent-ns-zz/configmaps", "application/json", cmJSON(`{"name":"x"}`, ""), []int{404}, []string{"nonexistent-ns-zz"}},
		{"unknown resource", "GET", "/widgets", "application/json", "", []int{404}, nil},
	}
}

func testBadInput(t *testing.T, s *testutil.Server) {
	ctx, cs := ctxT(t), s.Clientset
	ns := newNamespace(t, cs)
	c := cs.CoreV1().ConfigMaps(ns)
	keep, err := c.Create(ctx, cm(ns, "keep", map[string]string{"k": "v"}), metav1.CreateOptions{})
	must(t, err, "create")
	for _, tc := range badCases(ns) {
		t.Run(tc.name, func(t *testing.T) {
			path := "/api/v1/namespaces/" + ns + tc.path
			if strings.HasPrefix(tc.path, "/../") {
				path = "/api/v1/namespaces/" + strings.TrimPrefix(tc.path, "/../")
			}
			var body []byte
			if tc.body != "" {
				body = []byte(tc.body)
			}
			r := raw(ctx, s, tc.method, path, tc.contentType, body)
			if tc.name == "update missing" && r.code == 201 {
				// Upstream ConfigMaps do not allow create on update; 201 is a bug.
				t.Errorf("PUT of a missing configmap created it (upstream answers 404)")
				_ = c.Delete(ctx, "nope", metav1.DeleteOptions{})
			} else {
				checkBad(t, tc, r)
			}
			checkUntouched(t, ctx, s, ns, keep)
		})
	}
	// Nothing reached the namespace named in the mismatched body.
	_, err = cs.CoreV1().ConfigMaps("other-ns").Get(ctx, "x", metav1.GetOptions{})
	if !apierrors.IsNotFound(err) {
		t.Errorf("namespace mismatch created other-ns/x (err %v)", err)
	}
}

func checkBad(t *testing.T, tc badCase, r rawResult) {
	t.Helper()
	ok := false
	for _, c := range tc.codes {
		ok = ok || c == r.code
	}
	if !ok {
		t.Errorf("%s %s: HTTP %d, want one of %v; body: %.300s", tc.method, tc.path, r.code, tc.codes, r.body)
		return
	}
	if r.status == nil || r.status.Status != metav1.StatusFailure || int(r.status.Code) != r.code {
		t.Errorf("%s: answer is not a metav1.Status: %.300s", tc.name, r.body)
		return
	}
	if r.status.Message == "" {
		t.Errorf("%s: Status has an empty message", tc.name)
	}
	text := r.status.Message
	if d := r.status.Details; d != nil {
		for _, c := range d.Causes {
			text += " " + c.Field + " " + c.Message
		}
	}
	for _, m := range tc.mention {
		if !strings.Contains(text, m) {
			t.Errorf("%s: Status %q does not mention %q", tc.name, text, m)
		}
	}
}

// checkUntouched asserts the namespace still holds exactly the one configmap,
// unchanged.
func checkUntouched(t *testing.T, ctx context.Context, s *testutil.Server, ns string, keep *corev1.ConfigMap) {
	t.Helper()
	l, err := s.Clientset.CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{})
	must(t, err, "list")
	if len(l.Items) != 1 {
		t.Fatalf("after a bad request the namespace holds %v, want only keep", cmNames(l.Items))
	}
	got := l.Items[0]
	if got.Name != "keep" || got.ResourceVersion != keep.ResourceVersion || got.Data["k"] != "v" || len(got.Labels) != 0 {
		t.Fatalf("after a bad request keep changed: rv %s→%s data %v labels %v", keep.ResourceVersion, got.ResourceVersion, got.Data, got.Labels)
	}
}

func testTerminatingNamespace(t *testing.T, s *testutil.Server) {
	ctx, cs := ctxT(t), s.Clientset
	name := fmt.Sprintf("it-terminating-%d", len(t.Name()))
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Finalizers: []string{"orch.test/hold"}}}
	_, err := cs.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{})
	must(t, err, "create namespace")
	t.Cleanup(func() {
		ctx := context.Background()
		if n, err := cs.CoreV1().Namespaces().Get(ctx, name, metav1.GetOptions{}); err == nil {
			n.Finalizers = nil
			_, _ = cs.CoreV1().Namespaces().Update(ctx, n, metav1.UpdateOptions{})
		}
		_ = cs.CoreV1().Namespaces().Delete(ctx, name, metav1.DeleteOptions{})
	})
	_, err = cs.CoreV1().ConfigMaps(name).Create(ctx, cm(name, "before", nil), metav1.CreateOptions{})
	must(t, err, "create configmap before delete")
	must(t, cs.CoreV1().Namespaces().Delete(ctx, name, metav1.DeleteOptions{}), "delete namespace")
	got, err := cs.CoreV1().Namespaces().Get(ctx, name, metav1.GetOptions{})
	must(t, err, "get terminating namespace (a finalizer holds it)")
	if got.DeletionTimestamp == nil || got.Status.Phase != corev1.NamespaceTerminating {
		t.Fatalf("deleted namespace: deletionTimestamp %v phase %q, want set and Terminating", got.DeletionTimestamp, got.Status.Phase)
	}
	_, err = cs.CoreV1().ConfigMaps(name).Create(ctx, cm(name, "after", nil), metav1.CreateOptions{})
	st := wantCode(t, err, 403, "create in a terminating namespace")
	if !strings.Contains(st.Message, "terminat") {
		t.Errorf("403 message %q does not say the namespace is terminating", st.Message)
	}
	_, err = cs.CoreV1().ConfigMaps(name).Get(ctx, "after", metav1.GetOptions{})
	if !apierrors.IsNotFound(err) {
		t.Errorf("rejected create left an object behind (err %v)", err)
	}
}
