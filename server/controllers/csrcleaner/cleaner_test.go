package csrcleaner

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"slices"
	"strings"
	"testing"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/orch/orch/server/controllers/kit"
	"github.com/orch/orch/server/controllers/kit/kittest"
)

func certPEM(t *testing.T, notAfter time.Time) []byte {
	t.Helper()
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "c"},
		NotBefore: notAfter.Add(-2 * time.Hour), NotAfter: notAfter}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}

func csr(name string, created time.Time, cert []byte, conds ...certificatesv1.CertificateSigningRequestCondition) *certificatesv1.CertificateSigningRequest {
	return &certificatesv1.CertificateSigningRequest{ObjectMeta: metav1.ObjectMeta{Name: name, CreationTimestamp: metav1.NewTime(created)},
		Status: certificatesv1.CertificateSigningRequestStatus{Conditions: conds, Certificate: cert}}
}

func cond(typ certificatesv1.RequestConditionType, at time.Time) certificatesv1.CertificateSigningRequestCondition {
	return certificatesv1.CertificateSigningRequestCondition{Type: typ, Status: corev1.ConditionTrue, LastUpdateTime: metav1.NewTime(at)}
}

// TestDeadline: upstream's retention rules, the earliest that applies.
func TestDeadline(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	soon := t0.Add(30 * time.Minute)
	cases := []struct {
		name string
		csr  *certificatesv1.CertificateSigningRequest
		want time.Time
	}{
		{"pending", csr("p", t0, nil), t0.Add(24 * time.Hour)},
		{"denied", csr("d", t0, nil, cond(certificatesv1.CertificateDenied, t0.Add(time.Minute))), t0.Add(61 * time.Minute)},
		{"failed", csr("f", t0, nil, cond(certificatesv1.CertificateFailed, t0)), t0.Add(time.Hour)},
		{"approved, not issued", csr("a", t0, nil, cond(certificatesv1.CertificateApproved, t0)), t0.Add(24 * time.Hour)},
		{"issued", csr("i", t0, certPEM(t, t0.Add(48*time.Hour)), cond(certificatesv1.CertificateApproved, t0)), t0.Add(time.Hour)},
		{"issued, expiring first", csr("e", t0, certPEM(t, soon), cond(certificatesv1.CertificateApproved, t0)), soon},
	}
	for _, c := range cases {
		if got, ok := deadline(c.csr); !ok || !got.Equal(c.want) {
			t.Errorf("%s: %v %v, want %v", c.name, got, ok, c.want)
		}
	}
	if _, ok := deadline(csr("z", t0, nil, certificatesv1.CertificateSigningRequestCondition{Type: certificatesv1.CertificateDenied})); ok {
		t.Error("a condition without a time has a deadline")
	}
}

// TestController: with the clock two hours ahead, a denied request goes
// and a pending and an approved one stay (a day).
func TestController(t *testing.T) {
	cs, _ := kittest.Run(t, func(kc *kit.Context) (*Controller, error) { return New(kc) },
		kittest.Before(func(c *Controller) { c.now = func() time.Time { return time.Now().Add(2 * time.Hour) } }))
	csrs := cs.CertificatesV1().CertificateSigningRequests()
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{Subject: pkix.Name{CommonName: "c"}}, key)
	if err != nil {
		t.Fatal(err)
	}
	req := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der})
	for name, decision := range map[string]certificatesv1.RequestConditionType{"denied": certificatesv1.CertificateDenied,
		"pending": "", "approved": certificatesv1.CertificateApproved} {
		obj, err := csrs.Create(t.Context(), &certificatesv1.CertificateSigningRequest{ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: certificatesv1.CertificateSigningRequestSpec{Request: req, SignerName: "example.com/signer",
				Usages: []certificatesv1.KeyUsage{certificatesv1.UsageClientAuth}}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if decision == "" {
			continue
		}
		obj.Status.Conditions = []certificatesv1.CertificateSigningRequestCondition{{Type: decision, Status: corev1.ConditionTrue, Reason: "Test"}}
		if _, err := csrs.UpdateApproval(t.Context(), name, obj, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	kittest.Eventually(t, 10*time.Second, "the denied request to go", func() (bool, string) {
		l, err := csrs.List(t.Context(), metav1.ListOptions{})
		if err != nil {
			return false, err.Error()
		}
		var left []string
		for _, c := range l.Items {
			left = append(left, c.Name)
		}
		return len(left) == 2 && !slices.Contains(left, "denied"), strings.Join(left, ",")
	})
}
