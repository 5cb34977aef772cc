package kubectl

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/pem"
	"strings"
	"testing"
	"time"
)

// testCSR: apply a CertificateSigningRequest, `kubectl get csr` shows it
// Pending, `kubectl certificate approve` approves it and the signer issues
// its certificate (CONDITION Approved,Issued).
func testCSR(t *testing.T, k *kc) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{Subject: pkix.Name{CommonName: "kubectl-user"}}, key)
	if err != nil {
		t.Fatal(err)
	}
	req := base64.StdEncoding.EncodeToString(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der}))
	name := "kubectl-csr-" + strings.TrimPrefix(k.newNamespace(t), "kubectl-")
	k.stdin(t, `apiVersion: certificates.k8s.io/v1
kind: CertificateSigningRequest
metadata:
  name: `+name+`
spec:
  request: `+req+`
  signerName: kubernetes.io/kube-apiserver-client
  expirationSeconds: 86400
  usages: [client auth]
`, "apply", "-f", "-")
	t.Cleanup(func() { _, _, _ = k.run(t, "delete", "csr", name) })
	contains(t, "get csr", k.ok(t, "get", "csr", name), "SIGNERNAME", "REQUESTOR", "REQUESTEDDURATION", "CONDITION",
		"kubernetes.io/kube-apiserver-client", "system:admin", "24h", "Pending")
	contains(t, "certificate approve", k.ok(t, "certificate", "approve", name),
		"certificatesigningrequest.certificates.k8s.io/"+name+" approved")
	deadline := time.Now().Add(30 * time.Second)
	for {
		out := k.ok(t, "get", "csr", name)
		if strings.Contains(out, "Approved,Issued") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("never issued:\n%s", out)
		}
		time.Sleep(200 * time.Millisecond)
	}
	cert := k.ok(t, "get", "csr", name, "-o", "jsonpath={.status.certificate}")
	pemBytes, err := base64.StdEncoding.DecodeString(cert)
	if err != nil || !strings.Contains(string(pemBytes), "BEGIN CERTIFICATE") {
		t.Fatalf("issued certificate %q: %v", cert, err)
	}
}
