package apiserver

import (
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestKubectlSmoke runs a real kubectl (path in $ORCH_KUBECTL; skipped when
// unset) against the handler over TLS on loopback.
func TestKubectlSmoke(t *testing.T) {
	bin := os.Getenv("ORCH_KUBECTL")
	if bin == "" {
		t.Skip("set ORCH_KUBECTL to a kubectl binary to run")
	}
	e := newAPIEnv(t, 1000, nil)
	e.createNamespace("default")
	tlsSrv := httptest.NewTLSServer(e.s.Handler())
	t.Cleanup(tlsSrv.Close)
	dir := t.TempDir()
	kc := filepath.Join(dir, "kubeconfig")
	cfg := "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n    insecure-skip-tls-verify: true\n    server: " + tlsSrv.URL +
		"\nusers:\n- name: u\n  user:\n    token: admin\ncontexts:\n- name: x\n  context:\n    cluster: c\n    user: u\ncurrent-context: x\n"
	if err := os.WriteFile(kc, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	manifest := filepath.Join(dir, "m.yaml")
	_ = os.WriteFile(manifest, []byte(`apiVersion: apps/v1
kind: Deployment
metadata: {name: web, labels: {app: web}}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: web, image: "nginx:1.25"}]}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: cfg}
data: {a: "1"}
`), 0o600)
	run := func(wantOK bool, args ...string) string {
		t.Helper()
		cmd := exec.Command(bin, append([]string{"--kubeconfig", kc, "--cache-dir", filepath.Join(dir, "cache")}, args...)...)
		out, err := cmd.CombinedOutput()
		if (err == nil) != wantOK {
			t.Fatalf("kubectl %s: err=%v\n%s", strings.Join(args, " "), err, out)
		}
		t.Logf("kubectl %s:\n%s", strings.Join(args, " "), out)
		return string(out)
	}
	run(true, "apply", "-f", manifest)
	run(true, "apply", "-f", manifest)
	run(true, "get", "deploy,cm", "-o", "wide")
	run(true, "scale", "deploy/web", "--replicas=3")
	run(true, "label", "cm", "cfg", "x=y")
	run(true, "annotate", "cm", "cfg", "note=hi")
	run(true, "patch", "cm", "cfg", "--type=json", "-p", `[{"op":"add","path":"/data/b","value":"2"}]`)
	run(true, "get", "cm", "-l", "x=y", "-o", "yaml")
	run(true, "create", "configmap", "c2", "--from-literal=k=v")
	run(false, "create", "configmap", "c2", "--from-literal=k=v")
	run(true, "get", "cm", "--chunk-size=1")
	run(true, "delete", "cm", "c2")
	run(true, "delete", "-f", manifest)
	run(false, "get", "cm", "cfg")
	bad := filepath.Join(dir, "bad.yaml")
	_ = os.WriteFile(bad, []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: bad}\nspec: {foo: 1}\n"), 0o600)
	if out := run(false, "create", "--validate=strict", "-f", bad); !strings.Contains(out, `unknown field "spec"`) {
		t.Fatalf("strict create: %s", out)
	}
	go func() { // not e.must: no t.Fatal off the test goroutine
		time.Sleep(time.Second)
		req, _ := http.NewRequest("POST", e.srv.URL+cmDefault, strings.NewReader(cmBody("watched", "")))
		req.Header.Set("Authorization", "Bearer admin")
		if resp, err := e.srv.Client().Do(req); err == nil {
			resp.Body.Close()
		}
	}()
	if out := run(true, "get", "cm", "-w", "--request-timeout=3s"); !strings.Contains(out, "watched") {
		t.Fatalf("get -w did not show the new configmap: %s", out)
	}
	run(true, "create", "namespace", "tmp")
	run(true, "-n", "tmp", "create", "configmap", "x")
	run(true, "delete", "namespace", "tmp", "--wait=false")
	if out := run(false, "-n", "tmp", "create", "configmap", "y"); !strings.Contains(out, "being terminated") {
		t.Fatalf("create in terminating namespace: %s", out)
	}
	run(true, "get", "ns")
}
