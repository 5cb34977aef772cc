package certificates

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"strings"
	"testing"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	"github.com/orch/orch/server/registry"
)

func resourceNamed(t *testing.T, name string) *registry.Resource {
	t.Helper()
	for _, r := range resources(registry.Config{}) {
		if r.Resource == name {
			return r
		}
	}
	t.Fatalf("no %s resource", name)
	return nil
}

// caCert is a self-signed PEM certificate, a CA when ca.
func caCert(t *testing.T, ca bool) string {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "ca"}, IsCA: ca,
		BasicConstraintsValid: true, NotBefore: time.Now(), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
}

// wantErrs checks that errs are exactly the fields (in any order) and
// that each error mentions its detail.
func wantErrs(t *testing.T, what string, errs field.ErrorList, want map[string]string) {
	t.Helper()
	if len(errs) != len(want) {
		t.Errorf("%s: errors %v, want %d on %v", what, errs, len(want), want)
		return
	}
	for _, e := range errs {
		detail, ok := want[e.Field]
		if !ok || !strings.Contains(e.Error(), detail) {
			t.Errorf("%s: unexpected error %v (want %v)", what, e, want)
		}
	}
}

// TestValidateClusterTrustBundle: upstream's name, signer and bundle rules.
func TestValidateClusterTrustBundle(t *testing.T) {
	st := resourceNamed(t, "clustertrustbundles").Strategy
	ca, other := caCert(t, true), caCert(t, true)
	ctb := func(name, signer, bundle string) *certificatesv1.ClusterTrustBundle {
		return &certificatesv1.ClusterTrustBundle{ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: certificatesv1.ClusterTrustBundleSpec{SignerName: signer, TrustBundle: bundle}}
	}
	for _, c := range []struct {
		what string
		obj  *certificatesv1.ClusterTrustBundle
		want map[string]string
	}{
		{"plain", ctb("plain", "", ca+other), nil},
		{"with signer", ctb("ex.com:s:one", "ex.com/s", ca), nil},
		{"prefix", ctb("ex.com:t:one", "ex.com/s", ca), map[string]string{"metadata.name": "must be named with prefix ex.com:s:"}},
		{"colon", ctb("a:b", "", ca), map[string]string{"metadata.name": `must not have ":"`}},
		{"bad signer", ctb("nodot:s:x", "nodot/s", ca), map[string]string{"spec.signerName": "at least two segments"}},
		{"leaf", ctb("leaf", "", caCert(t, false)), map[string]string{"spec.trustBundle": "entry 0 does not have the CA bit set"}},
		{"duplicate", ctb("dup", "", ca+other+ca), map[string]string{"spec.trustBundle": "duplicate trust anchor (indices [0 2])"}},
		{"none", ctb("none", "", "not pem"), map[string]string{"spec.trustBundle": "at least one trust anchor"}},
		{"block type", ctb("key", "", strings.Replace(ca, "CERTIFICATE", "PRIVATE KEY", 2)),
			map[string]string{"spec.trustBundle": "entry 0 has bad block type: PRIVATE KEY"}},
	} {
		wantErrs(t, c.what, st.Validate(context.Background(), c.obj), c.want)
	}
	old := ctb("ex.com:s:one", "ex.com/s", ca)
	changed := old.DeepCopy()
	changed.Spec.SignerName = "ex.com/t"
	changed.Name = "ex.com:t:one"
	errs := st.ValidateUpdate(context.Background(), changed, old)
	if !strings.Contains(errs.ToAggregate().Error(), "spec.signerName: Invalid value") || !strings.Contains(errs.ToAggregate().Error(), "immutable") {
		t.Errorf("signer change: %v", errs)
	}
	// A stored bundle that would no longer parse is not parsed again when
	// an update keeps it.
	legacy := ctb("legacy", "", caCert(t, false))
	relabelled := legacy.DeepCopy()
	relabelled.Labels = map[string]string{"a": "b"}
	if errs := st.ValidateUpdate(context.Background(), relabelled, legacy); len(errs) != 0 {
		t.Errorf("unchanged bundle re-parsed: %v", errs)
	}
}

// stub is a stub PKCS#10 request signed by key.
func stub(t *testing.T, key crypto.Signer) []byte {
	t.Helper()
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{}, key)
	if err != nil {
		t.Fatal(err)
	}
	return der
}

func newPCR(t *testing.T, key crypto.Signer) *certificatesv1.PodCertificateRequest {
	return &certificatesv1.PodCertificateRequest{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "req-1"},
		Spec: certificatesv1.PodCertificateRequestSpec{SignerName: "ex.com/s", PodName: "p", PodUID: "pu",
			ServiceAccountName: "default", ServiceAccountUID: "su", NodeName: "n", NodeUID: "nu",
			MaxExpirationSeconds: ptr.To[int32](86400), StubPKCS10Request: stub(t, key)}}
}

// TestValidatePodCertificateRequest: defaults, subjects, lifetime bounds
// and key types.
func TestValidatePodCertificateRequest(t *testing.T) {
	st := resourceNamed(t, "podcertificaterequests").Strategy
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	r := newPCR(t, key)
	r.Spec.MaxExpirationSeconds = nil
	st.Default(r)
	if ptr.Deref(r.Spec.MaxExpirationSeconds, 0) != 86400 {
		t.Fatalf("default maxExpirationSeconds %v", r.Spec.MaxExpirationSeconds)
	}
	weak, _ := rsa.GenerateKey(rand.Reader, 1024)
	p224, _ := ecdsa.GenerateKey(elliptic.P224(), rand.Reader)
	for _, c := range []struct {
		what   string
		change func(*certificatesv1.PodCertificateRequest)
		want   map[string]string
	}{
		{"valid", func(*certificatesv1.PodCertificateRequest) {}, nil},
		{"no UIDs", func(r *certificatesv1.PodCertificateRequest) { r.Spec.PodUID, r.Spec.NodeUID = "", "" },
			map[string]string{"spec.podUID": "must not be empty", "spec.nodeUID": "must not be empty"}},
		{"short", func(r *certificatesv1.PodCertificateRequest) { r.Spec.MaxExpirationSeconds = ptr.To[int32](3599) },
			map[string]string{"spec.maxExpirationSeconds": "must be in the range [3600, 7862400]"}},
		{"kubernetes.io", func(r *certificatesv1.PodCertificateRequest) {
			r.Spec.SignerName, r.Spec.MaxExpirationSeconds = "kubernetes.io/x", ptr.To[int32](86401)
		}, map[string]string{"spec.maxExpirationSeconds": "must be in the range [3600, 86400]"}},
		{"weak RSA", func(r *certificatesv1.PodCertificateRequest) { r.Spec.StubPKCS10Request = stub(t, weak) },
			map[string]string{"spec.stubPKCS10Request": "RSA keys must have modulus size 3072 or 4096"}},
		{"P-224", func(r *certificatesv1.PodCertificateRequest) { r.Spec.StubPKCS10Request = stub(t, p224) },
			map[string]string{"spec.stubPKCS10Request": "must use curve P256, P384, or P521"}},
		{"no key", func(r *certificatesv1.PodCertificateRequest) { r.Spec.StubPKCS10Request = nil },
			map[string]string{"spec": "exactly one of (stubPKCS10Request)"}},
		{"annotations", func(r *certificatesv1.PodCertificateRequest) {
			r.Spec.UnverifiedUserAnnotations = map[string]string{"nodomain": "x"}
		},
			map[string]string{"spec.unverifiedUserAnnotations": "prefix"}},
	} {
		r := newPCR(t, key)
		c.change(r)
		wantErrs(t, c.what, st.Validate(context.Background(), r), c.want)
	}
	r = newPCR(t, key)
	changed := r.DeepCopy()
	changed.Spec.SignerName = "ex.com/other"
	if errs := st.ValidateUpdate(context.Background(), changed, r); len(errs) == 0 {
		t.Error("spec change accepted")
	}
}

// issued returns r issued a certificate for key living d, valid from
// nb, refresh at nb+refresh.
func issued(t *testing.T, r *certificatesv1.PodCertificateRequest, key crypto.Signer, nb time.Time, d, refresh time.Duration) *certificatesv1.PodCertificateRequest {
	t.Helper()
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(9), NotBefore: nb, NotAfter: nb.Add(d), DNSNames: []string{"ok.example"}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		t.Fatal(err)
	}
	r = r.DeepCopy()
	r.Status = certificatesv1.PodCertificateRequestStatus{
		CertificateChain: string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})),
		NotBefore:        ptr.To(metav1.NewTime(nb)), NotAfter: ptr.To(metav1.NewTime(nb.Add(d))),
		BeginRefreshAt: ptr.To(metav1.NewTime(nb.Add(refresh))),
		Conditions:     []metav1.Condition{cond("Issued")},
	}
	return r
}

func cond(ty string) metav1.Condition {
	return metav1.Condition{Type: ty, Status: "True", Reason: "Test", Message: "m", LastTransitionTime: metav1.Now()}
}

// TestPodCertificateRequestStatus: upstream's status transitions.
func TestPodCertificateRequestStatus(t *testing.T) {
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	other, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	now := time.Now().Truncate(time.Second)
	old := newPCR(t, key)
	good := issued(t, old, key, now.Add(-time.Minute), 2*time.Hour, time.Hour)
	for _, c := range []struct {
		what string
		obj  *certificatesv1.PodCertificateRequest
		want string // "" = valid
	}{
		{"issued", good, ""},
		{"another key", issued(t, old, other, now, 2*time.Hour, time.Hour), "not issued to the requested public key"},
		{"stale notBefore", issued(t, old, key, now.Add(-10*time.Minute), 2*time.Hour, time.Hour), "within 5 minutes"},
		{"too short", issued(t, old, key, now, 59*time.Minute, 20*time.Minute), "lifetime must be >= 1 hour"},
		{"too long", issued(t, old, key, now, 25*time.Hour, time.Hour), "lifetime must be <= spec.maxExpirationSeconds"},
		{"refresh too early", issued(t, old, key, now, 2*time.Hour, 5*time.Minute), "at least 10 minutes after status.notBefore"},
		{"refresh too late", issued(t, old, key, now, 2*time.Hour, 115*time.Minute), "at least 10 minutes before status.notAfter"},
		{"notAfter mismatch", func() *certificatesv1.PodCertificateRequest {
			r := good.DeepCopy()
			r.Status.NotAfter = ptr.To(metav1.NewTime(r.Status.NotAfter.Add(time.Second)))
			return r
		}(), "NotAfter time encoded in the leaf"},
		{"two terminal conditions", func() *certificatesv1.PodCertificateRequest {
			r := good.DeepCopy()
			r.Status.Conditions = append(r.Status.Conditions, cond("Denied"))
			return r
		}(), "at most one condition"},
		{"unknown condition", func() *certificatesv1.PodCertificateRequest {
			r := old.DeepCopy()
			r.Status.Conditions = []metav1.Condition{cond("Approved")}
			return r
		}(), "Unsupported value"},
		{"denied with a chain", func() *certificatesv1.PodCertificateRequest {
			r := good.DeepCopy()
			r.Status.Conditions = []metav1.Condition{cond("Denied")}
			return r
		}(), "non-condition status fields must be empty"},
		{"denied", func() *certificatesv1.PodCertificateRequest {
			r := old.DeepCopy()
			r.Status.Conditions = []metav1.Condition{cond("Failed")}
			return r
		}(), ""},
		{"pending change", func() *certificatesv1.PodCertificateRequest {
			r := old.DeepCopy()
			r.Status.CertificateChain = good.Status.CertificateChain
			return r
		}(), "status is immutable unless transitioning"},
	} {
		errs := validatePCRStatus(c.obj, old, now)
		switch {
		case c.want == "" && len(errs) != 0:
			t.Errorf("%s: %v", c.what, errs)
		case c.want != "" && !strings.Contains(errs.ToAggregate().Error(), c.want):
			t.Errorf("%s: errors %v, want %q", c.what, errs, c.want)
		}
	}
	reissued := issued(t, old, key, now, 3*time.Hour, time.Hour)
	if errs := validatePCRStatus(reissued, good, now); !strings.Contains(errs.ToAggregate().Error(), "immutable after PodCertificateRequest is issued") {
		t.Errorf("re-issuing: %v", errs)
	}
	if errs := validatePCRStatus(good.DeepCopy(), good, now); len(errs) != 0 {
		t.Errorf("the same status again: %v", errs)
	}
}

// TestPodCertificateRequestRow: kubectl's columns.
func TestPodCertificateRequestRow(t *testing.T) {
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	r := newPCR(t, key)
	r.Spec.UnverifiedUserAnnotations = map[string]string{"ex.com/a": "b"}
	st := resourceNamed(t, "podcertificaterequests").Strategy
	row := st.TableRow(r)
	want := []interface{}{"req-1", "p", "default", "n", "ex.com/s", "Pending", "ex.com/a=b"}
	if len(row) != len(want) || len(st.TableColumns()) != len(want) {
		t.Fatalf("row %v columns %d", row, len(st.TableColumns()))
	}
	for i := range want {
		if row[i] != want[i] {
			t.Errorf("cell %d: %v, want %v", i, row[i], want[i])
		}
	}
	r.Status.Conditions = []metav1.Condition{cond("Denied")}
	if st.TableRow(r)[5] != "Denied" {
		t.Errorf("state of a denied request: %v", st.TableRow(r)[5])
	}
}
