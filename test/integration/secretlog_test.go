package integration

import (
	"encoding/base64"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/orch/orch/test/testutil"
)

// TestSecretsNeverLogged runs a --debug server, pushes a secret value
// through create, update, patch and rejected requests, and checks the value
// appears nowhere in the server's output (plain or base64).
func TestSecretsNeverLogged(t *testing.T) {
	t.Parallel()
	s := testutil.StartServer(t, testutil.Options{Quiet: true, Debug: true, KeepOutput: true})
	ctx, cs := ctxT(t), s.Clientset
	ns := "default" // the server is thrown away: no namespace to clean up
	c := cs.CoreV1().Secrets(ns)
	value := fmt.Sprintf("TOPSECRET-%016x", rand.Uint64())
	enc := base64.StdEncoding.EncodeToString([]byte(value))
	sec := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "db"}, Data: map[string][]byte{"password": []byte(value)}}
	_, err := c.Create(ctx, sec, metav1.CreateOptions{})
	must(t, err, "create")
	got, err := c.Get(ctx, "db", metav1.GetOptions{})
	must(t, err, "get")
	got.StringData = map[string]string{"other": value}
	_, err = c.Update(ctx, got, metav1.UpdateOptions{})
	must(t, err, "update")
	_, err = c.Patch(ctx, "db", types.MergePatchType, []byte(`{"stringData":{"third":"`+value+`"}}`), metav1.PatchOptions{})
	must(t, err, "patch")
	bad := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "Bad_Name"}, StringData: map[string]string{"k": value}}
	_, err = c.Create(ctx, bad, metav1.CreateOptions{})
	wantCode(t, err, 422, "secret with an invalid name")
	r := raw(ctx, s, "POST", "/api/v1/namespaces/"+ns+"/secrets", "application/json",
		[]byte(`{"apiVersion":"v1","kind":"Secret","metadata":{"name":"x"},"data":{"k":"`+value+`"}}`)) // not base64: 400
	if r.code < 400 {
		t.Errorf("secret with non-base64 data: HTTP %d, want 4xx", r.code)
	}
	if strings.Contains(r.body, value) {
		t.Logf("note: the 4xx answer echoes the bad value back to the (authenticated) client")
	}
	_, err = c.Patch(ctx, "db", types.JSONPatchType, []byte(`[{"op":"test","path":"/data/password","value":"`+enc+`x"}]`), metav1.PatchOptions{})
	if err == nil {
		t.Errorf("json patch with a failing test op succeeded")
	}
	must(t, c.Delete(ctx, "db", metav1.DeleteOptions{}), "delete")
	s.Stop()
	out := s.Output()
	if !strings.Contains(out, "orch server is ready") {
		t.Fatalf("captured server output is incomplete (%d bytes): the check would be vacuous", len(out))
	}
	t.Logf("checked %d lines of --debug output", strings.Count(out, "\n"))
	for _, v := range []string{value, enc} {
		if i := strings.Index(out, v); i >= 0 {
			lo, hi := max(0, i-200), min(len(out), i+len(v)+50)
			t.Errorf("secret value %q appears in the server's --debug output:\n...%s...", v, out[lo:hi])
		}
	}
}
