package kubectl

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/pem"
	"math/big"
	"strings"
	"testing"
	"time"
)

// csrManifest is a kube-apiserver-client CertificateSigningRequest for cn.
func csrManifest(t *testing.T, name, cn string) string {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{Subject: pkix.Name{CommonName: cn}}, key)
	if err != nil {
		t.Fatal(err)
	}
	req := base64.StdEncoding.EncodeToString(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der}))
	return `apiVersion: certificates.k8s.io/v1
kind: CertificateSigningRequest
metadata:
  name: ` + name + `
spec:
  request: ` + req + `
  signerName: kubernetes.io/kube-apiserver-client
  expirationSeconds: 86400
  usages: [client auth]
`
}

// testCSR: apply a CertificateSigningRequest, `kubectl get csr` shows it
// Pending, `kubectl certificate approve` approves it and the signer issues
// its certificate (CONDITION Approved,Issued); `kubectl certificate deny`
// denies another, which is never issued; spec.signerName selects.
func testCSR(t *testing.T, k *kc) {
	suffix := strings.TrimPrefix(k.newNamespace(t), "kubectl-")
	name, denied := "kubectl-csr-"+suffix, "kubectl-denied-"+suffix
	k.stdin(t, csrManifest(t, name, "kubectl-user")+"---\n"+csrManifest(t, denied, "kubectl-other"), "apply", "-f", "-")
	t.Cleanup(func() { _, _, _ = k.run(t, "delete", "csr", name, denied) })
	contains(t, "get csr", k.ok(t, "get", "csr", name), "SIGNERNAME", "REQUESTOR", "REQUESTEDDURATION", "CONDITION",
		"kubernetes.io/kube-apiserver-client", "system:admin", "24h", "Pending")
	contains(t, "certificate approve", k.ok(t, "certificate", "approve", name),
		"certificatesigningrequest.certificates.k8s.io/"+name+" approved")
	contains(t, "certificate deny", k.ok(t, "certificate", "deny", denied),
		"certificatesigningrequest.certificates.k8s.io/"+denied+" denied")
	waitOutput(t, k, "Approved,Issued", "get", "csr", name)
	cert := k.ok(t, "get", "csr", name, "-o", "jsonpath={.status.certificate}")
	pemBytes, err := base64.StdEncoding.DecodeString(cert)
	if err != nil || !strings.Contains(string(pemBytes), "BEGIN CERTIFICATE") {
		t.Fatalf("issued certificate %q: %v", cert, err)
	}
	if out := k.ok(t, "get", "csr", denied, "--no-headers"); !strings.Contains(out, "Denied") || strings.Contains(out, "Issued") {
		t.Fatalf("denied request: %s", out)
	}
	contains(t, "field selector", k.ok(t, "get", "csr", "--field-selector", "spec.signerName=kubernetes.io/kube-apiserver-client",
		"-o", "name"), "certificatesigningrequest.certificates.k8s.io/"+name)
	if out := k.ok(t, "get", "csr", "--field-selector", "spec.signerName=example.com/none", "-o", "name"); strings.Contains(out, name) {
		t.Fatalf("field selector of another signer listed %s:\n%s", name, out)
	}
}

// waitOutput runs kubectl args until its output contains want.
func waitOutput(t *testing.T, k *kc, want string, args ...string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		out := k.ok(t, args...)
		if strings.Contains(out, want) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("kubectl %v never showed %q:\n%s", args, want, out)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// caPEMIndented is a self-signed CA certificate, indented for a YAML
// block scalar.
func caPEMIndented(t *testing.T) string {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "kubectl-ca"}, IsCA: true,
		BasicConstraintsValid: true, NotBefore: time.Now(), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	p := strings.TrimSpace(string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})))
	return "    " + strings.ReplaceAll(p, "\n", "\n    ")
}

// testTrustBundles: apply a ClusterTrustBundle with a signer, `kubectl
// get clustertrustbundles` shows its SIGNERNAME column, the field
// selector finds it, and a bundle named against its signer is refused.
func testTrustBundles(t *testing.T, k *kc) {
	suffix := strings.TrimPrefix(k.newNamespace(t), "kubectl-")
	name := "kubectl.example:" + suffix + ":one"
	manifest := func(name string) string {
		return `apiVersion: certificates.k8s.io/v1
kind: ClusterTrustBundle
metadata:
  name: ` + name + `
spec:
  signerName: kubectl.example/` + suffix + `
  trustBundle: |
` + caPEMIndented(t) + "\n"
	}
	contains(t, "apply", k.stdin(t, manifest(name), "apply", "-f", "-"), "clustertrustbundle.certificates.k8s.io/"+name+" created")
	t.Cleanup(func() { _, _, _ = k.run(t, "delete", "clustertrustbundle", name) })
	contains(t, "get", k.ok(t, "get", "clustertrustbundles", name), "NAME", "SIGNERNAME", name, "kubectl.example/"+suffix)
	contains(t, "field selector", k.ok(t, "get", "clustertrustbundles", "--field-selector",
		"spec.signerName=kubectl.example/"+suffix, "-o", "name"), "clustertrustbundle.certificates.k8s.io/"+name)
	if out := k.ok(t, "get", "podcertificaterequests", "-A", "-o", "name"); strings.TrimSpace(out) != "" {
		t.Fatalf("pod certificate requests: %q", out)
	}
	out, err := k.stdinErr(t, manifest("wrong-"+suffix), "apply", "-f", "-")
	if err == nil || !strings.Contains(out, "must be named with prefix kubectl.example:"+suffix+":") {
		t.Fatalf("misnamed bundle: %v %s", err, out)
	}
}
