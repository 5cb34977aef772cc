package integration

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"os"
	"path/filepath"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/orch/orch/test/testutil"
)

func init() {
	register("AnonymousIsUnauthorized", testAnonymous)
	register("ForeignClientCertIsUnauthorized", testForeignCert)
	register("KubeconfigMode0600", testKubeconfigMode)
}

// anonConfig trusts the server's CA but presents no credentials.
func anonConfig(s *testutil.Server) *rest.Config {
	return &rest.Config{
		Host:            s.Config.Host,
		TLSClientConfig: rest.TLSClientConfig{CAData: s.Config.CAData, CAFile: s.Config.CAFile, ServerName: s.Config.ServerName},
		Timeout:         30 * time.Second,
	}
}

func testAnonymous(t *testing.T, s *testutil.Server) {
	ctx := ctxT(t)
	cs, err := kubernetes.NewForConfig(anonConfig(s))
	must(t, err, "clientset")
	_, err = cs.CoreV1().Namespaces().List(ctx, metav1.ListOptions{})
	wantCode(t, err, 401, "anonymous list namespaces")
	_, err = cs.CoreV1().ConfigMaps("default").Create(ctx, cm("default", "anon", nil), metav1.CreateOptions{})
	wantCode(t, err, 401, "anonymous create")
	_, err = cs.Discovery().ServerVersion()
	wantCode(t, err, 401, "anonymous /version")
	bad := anonConfig(s)
	bad.BearerToken = "not-a-real-token"
	cs, err = kubernetes.NewForConfig(bad)
	must(t, err, "clientset")
	_, err = cs.CoreV1().Namespaces().List(ctx, metav1.ListOptions{})
	wantCode(t, err, 401, "list with a bogus bearer token")
	if _, err := s.Clientset.CoreV1().ConfigMaps("default").Get(ctx, "anon", metav1.GetOptions{}); err == nil {
		t.Fatalf("anonymous create stored default/anon")
	}
}

// foreignCert makes a CA of our own and a client cert it signed, claiming
// the admin identity (system:masters).
func foreignCert(t *testing.T) (certPEM, keyPEM []byte) {
	t.Helper()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	must(t, err, "ca key")
	caTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "evil-ca"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	must(t, err, "ca cert")
	ca, err := x509.ParseCertificate(caDER)
	must(t, err, "parse ca")
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	must(t, err, "client key")
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(2),
		Subject:      pkix.Name{CommonName: "system:admin", Organization: []string{"system:masters"}},
		NotBefore:    time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	must(t, err, "client cert")
	kd, err := x509.MarshalECPrivateKey(key)
	must(t, err, "marshal key")
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kd})
}

func testForeignCert(t *testing.T, s *testutil.Server) {
	ctx := ctxT(t)
	certPEM, keyPEM := foreignCert(t)
	cfg := anonConfig(s)
	cfg.CertData, cfg.KeyData = certPEM, keyPEM
	cs, err := kubernetes.NewForConfig(cfg)
	must(t, err, "clientset")
	_, err = cs.CoreV1().Secrets("kube-system").List(ctx, metav1.ListOptions{})
	if err != nil && statusOf(err) == nil {
		// No access either way, but kube-apiserver asks for a client cert
		// without requiring a known CA (tls.RequestClientCert) and answers
		// 401 from its authenticator, so clients see an API Status, and a
		// request may still authenticate with a bearer token.
		t.Fatalf("foreign client cert refused at the TLS layer (%v); want HTTP 401 Unauthorized like kube-apiserver", err)
	}
	wantCode(t, err, 401, "list secrets with a client cert from another CA")
}

// TestKubeconfigDefaultMode starts a server without --write-kubeconfig-mode:
// the admin kubeconfig (it holds the admin key) must still be 0600.
func TestKubeconfigDefaultMode(t *testing.T) {
	t.Parallel()
	s := testutil.StartServer(t, testutil.Options{Quiet: true, DefaultKubeconfigMode: true})
	testKubeconfigMode(t, s)
	// The server's own secrets are not readable by others either.
	for _, p := range []string{"server/tls", "server/token"} {
		fi, err := os.Stat(filepath.Join(s.DataDir, p))
		if err != nil {
			t.Logf("note: %s: %v", p, err)
			continue
		}
		if fi.Mode().Perm()&0o077 != 0 {
			t.Errorf("%s has mode %o: readable by group/others", p, fi.Mode().Perm())
		}
	}
	keys, _ := filepath.Glob(filepath.Join(s.DataDir, "server", "tls", "*.key"))
	for _, k := range keys {
		if fi, err := os.Stat(k); err == nil && fi.Mode().Perm() != 0o600 {
			t.Errorf("private key %s has mode %o, want 600", k, fi.Mode().Perm())
		}
	}
	if len(keys) == 0 {
		t.Logf("note: no *.key files under %s/server/tls", s.DataDir)
	}
}

func testKubeconfigMode(t *testing.T, s *testutil.Server) {
	fi, err := os.Stat(s.Kubeconfig)
	must(t, err, "stat kubeconfig")
	if m := fi.Mode().Perm(); m != 0o600 {
		t.Fatalf("kubeconfig %s mode %o, want 600", s.Kubeconfig, m)
	}
	ents, err := os.ReadDir(s.DataDir)
	must(t, err, "read data dir")
	if len(ents) == 0 {
		t.Fatalf("data dir %s is empty", s.DataDir)
	}
}
