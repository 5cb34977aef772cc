//go:build charts

package e2e

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	testimages "github.com/orch/orch/test/images"
)

// TestCertManager installs the cert-manager chart ($CHARTS/cert-manager)
// with its CRDs, its webhook reached through its Service and its
// startupapicheck hook, and has a self-signed Issuer issue a Certificate.
// cert-manager's programs are separate modules the module proxy does not
// serve, so the project cannot build them: this runs only with
// CERT_MANAGER_BIN naming a folder holding controller, webhook, cainjector
// and startupapicheck built by hand from cert-manager v1.20.3's cmd/*
// (make cert-manager; docs/charts.md says how).
func TestCertManager(t *testing.T) {
	bins, charts := os.Getenv("CERT_MANAGER_BIN"), os.Getenv("CHARTS")
	if bins == "" || charts == "" {
		t.Skip("set CERT_MANAGER_BIN (programs built by hand, see docs/charts.md) and CHARTS")
	}
	requireHost(t)
	e := startClusterAt(t, dummyAddress(t))
	for _, p := range []string{"controller", "webhook", "cainjector", "startupapicheck"} {
		data, err := os.ReadFile(filepath.Join(bins, p))
		if err != nil {
			t.Fatal(err)
		}
		path := "app/cmd/" + p + "/" + p
		err = testimages.WriteImage(filepath.Join(e.dataDir, "agent", "images", "cert-manager-"+p+".tar"),
			[]testimages.File{{Name: path, Mode: 0o755, Data: data}},
			testimages.Config{Entrypoint: []string{"/" + path}, User: "1000"}, "quay.io/jetstack/cert-manager-"+p+":v1.20.3")
		if err != nil {
			t.Fatal(err)
		}
	}
	h := &helm{t: t, bin: buildHelm(t), kubeconfig: e.server.Kubeconfig}
	h.onFail = func() { dumpPods(t, e) }
	h.run(t, "install", "cert-manager", filepath.Join(charts, "cert-manager"), "-n", "cert-manager", "--create-namespace",
		"--wait", "--timeout", "5m", "--set", "crds.enabled=true", "--set", "global.imagePullPolicy=Never",
		"--set", "image.pullPolicy=Never", "--set", "webhook.image.pullPolicy=Never",
		"--set", "cainjector.image.pullPolicy=Never", "--set", "startupapicheck.image.pullPolicy=Never")
	issueSelfSigned(t, e)
	h.run(t, "uninstall", "cert-manager", "-n", "cert-manager", "--wait", "--timeout", "5m")
}

// issueSelfSigned creates a self-signed Issuer and a Certificate and
// waits for the Certificate to be Ready with its Secret.
func issueSelfSigned(t *testing.T, e *agentEnv) {
	dyn, err := dynamic.NewForConfig(e.server.Config)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	gvr := func(r string) schema.GroupVersionResource {
		return schema.GroupVersionResource{Group: "cert-manager.io", Version: "v1", Resource: r}
	}
	issuer := &unstructured.Unstructured{Object: map[string]interface{}{"apiVersion": "cert-manager.io/v1", "kind": "Issuer",
		"metadata": map[string]interface{}{"name": "selfsigned"}, "spec": map[string]interface{}{"selfSigned": map[string]interface{}{}}}}
	cert := &unstructured.Unstructured{Object: map[string]interface{}{"apiVersion": "cert-manager.io/v1", "kind": "Certificate",
		"metadata": map[string]interface{}{"name": "example"},
		"spec": map[string]interface{}{"secretName": "example-tls", "commonName": "example.test", "dnsNames": []interface{}{"example.test"},
			"issuerRef": map[string]interface{}{"name": "selfsigned", "kind": "Issuer"}}}}
	for _, c := range []struct {
		r   string
		obj *unstructured.Unstructured
	}{{"issuers", issuer}, {"certificates", cert}} {
		waitFor(t, 60*time.Second, "create "+c.r, func() (bool, error) {
			_, err := dyn.Resource(gvr(c.r)).Namespace("default").Create(ctx, c.obj, metav1.CreateOptions{})
			if err != nil {
				t.Logf("create %s: %v", c.r, err)
			}
			return err == nil, nil
		})
	}
	waitFor(t, 120*time.Second, "the Certificate to be Ready", func() (bool, error) {
		got, err := dyn.Resource(gvr("certificates")).Namespace("default").Get(ctx, "example", metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		conds, _, _ := unstructured.NestedSlice(got.Object, "status", "conditions")
		for _, c := range conds {
			m, _ := c.(map[string]interface{})
			if m["type"] == "Ready" && m["status"] == "True" {
				return true, nil
			}
		}
		return false, nil
	})
	s, err := e.server.Clientset.CoreV1().Secrets("default").Get(ctx, "example-tls", metav1.GetOptions{})
	if err != nil || len(s.Data["tls.crt"]) == 0 || len(s.Data["tls.key"]) == 0 {
		t.Fatalf("the Certificate's Secret: %v %v", err, s)
	}
	t.Logf("cert-manager issued example-tls (%d bytes of certificate)", len(s.Data["tls.crt"]))
}
