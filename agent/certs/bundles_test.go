package certs

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"
	certificatesv1 "k8s.io/api/certificates/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
)

// caPEM is a self-signed CA certificate named cn.
func caPEM(t *testing.T, cn string) string {
	t.Helper()
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: cn}, IsCA: true,
		BasicConstraintsValid: true, NotBefore: time.Now(), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, pub, priv)
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
}

func bundle(name, signer, pemData string, labels map[string]string) *certificatesv1.ClusterTrustBundle {
	return &certificatesv1.ClusterTrustBundle{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
		Spec: certificatesv1.ClusterTrustBundleSpec{SignerName: signer, TrustBundle: pemData}}
}

func runBundles(t *testing.T, objs ...runtime.Object) *Bundles {
	t.Helper()
	b := NewBundles(fake.NewClientset(objs...), zaptest.NewLogger(t))
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go b.Run(ctx)
	for i := 0; ; i++ { // Run sets its context asynchronously
		if _, err := b.ensure(ctx); err == nil {
			return b
		} else if i > 100 {
			t.Fatal(err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestBundles: by name and by signer with upstream's selector semantics
// (nil matches nothing, empty everything), optional sources empty,
// required ones an error, anchors deduplicated.
func TestBundles(t *testing.T) {
	a, b, c := caPEM(t, "a"), caPEM(t, "b"), caPEM(t, "c")
	m := runBundles(t,
		bundle("plain", "", a+b, nil),
		bundle("ex.com:s:1", "ex.com/s", a, map[string]string{"live": "true"}),
		bundle("ex.com:s:2", "ex.com/s", b+a, map[string]string{"live": "false"}),
		bundle("ex.com:t:1", "ex.com/t", c, map[string]string{"live": "true"}))
	ctx := context.Background()
	all := func(pems ...string) func(string) bool {
		return func(got string) bool {
			n := 0
			for _, p := range pems {
				if !strings.Contains(got, p) {
					return false
				}
				n += len(p)
			}
			return len(got) == n
		}
	}
	empty := func(got string) bool { return got == "" }
	live := &metav1.LabelSelector{MatchLabels: map[string]string{"live": "true"}}
	for _, tc := range []struct {
		what    string
		get     func() ([]byte, error)
		ok      func(string) bool
		wantErr string
	}{
		{"by name", func() ([]byte, error) { return m.TrustAnchorsByName(ctx, "plain", false) }, all(a, b), ""},
		{"missing, optional", func() ([]byte, error) { return m.TrustAnchorsByName(ctx, "nope", true) }, empty, ""},
		{"missing, required", func() ([]byte, error) { return m.TrustAnchorsByName(ctx, "nope", false) }, nil, "not found"},
		{"signer, empty selector, deduplicated", func() ([]byte, error) {
			return m.TrustAnchorsBySigner(ctx, "ex.com/s", &metav1.LabelSelector{}, false)
		}, all(a, b), ""},
		{"signer and labels", func() ([]byte, error) { return m.TrustAnchorsBySigner(ctx, "ex.com/s", live, false) }, all(a), ""},
		{"nil selector, optional", func() ([]byte, error) { return m.TrustAnchorsBySigner(ctx, "ex.com/s", nil, true) }, empty, ""},
		{"nil selector, required", func() ([]byte, error) { return m.TrustAnchorsBySigner(ctx, "ex.com/s", nil, false) }, nil,
			"matched zero ClusterTrustBundles"},
	} {
		got, err := tc.get()
		switch {
		case tc.wantErr != "":
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("%s: err %v, want %q", tc.what, err, tc.wantErr)
			}
		case err != nil:
			t.Errorf("%s: %v", tc.what, err)
		case !tc.ok(string(got)):
			t.Errorf("%s: got %q", tc.what, got)
		}
	}
}

func TestBundlesNotRunning(t *testing.T) {
	b := NewBundles(fake.NewClientset(), zaptest.NewLogger(t))
	if _, err := b.TrustAnchorsByName(context.Background(), "x", true); err == nil {
		t.Fatal("want an error before Run")
	}
}
