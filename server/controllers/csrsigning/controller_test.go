package csrsigning

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"net"
	"slices"
	"strings"
	"testing"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/orch/orch/internal/pki"
	"github.com/orch/orch/server/controllers/kit"
	"github.com/orch/orch/server/controllers/kit/kittest"
)

func requestPEM(t *testing.T, tmpl *x509.CertificateRequest) []byte {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.CreateCertificateRequest(rand.Reader, tmpl, key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der})
}

// signCase is one request: made (and approved or denied), then expected
// to be issued, failed with a message, or left alone.
type signCase struct {
	name, signer string
	req          x509.CertificateRequest
	usages       usages
	decision     certificatesv1.RequestConditionType // "" leaves it pending
	outcome      string                              // "issued", "left", or the Failed message
}

func TestController(t *testing.T) {
	bundle, err := pki.LoadOrCreate(t.TempDir(), pki.Options{Hostname: "h",
		HostIPs: func() ([]net.IP, error) { return []net.IP{net.IPv4(127, 0, 0, 1)}, nil }})
	if err != nil {
		t.Fatal(err)
	}
	cs, _ := kittest.Run(t, func(kc *kit.Context) (*Controller, error) { return New(kc, bundle.SignRequest) })
	node := pkix.Name{CommonName: "system:node:n1", Organization: []string{"system:nodes"}}
	cases := []signCase{
		{"client", certificatesv1.KubeAPIServerClientSignerName, x509.CertificateRequest{Subject: pkix.Name{CommonName: "jane", Organization: []string{"devs"}}},
			usages{sig, client}, "Approved", "issued"},
		{"kubelet-client", certificatesv1.KubeAPIServerClientKubeletSignerName, x509.CertificateRequest{Subject: node}, usages{sig, client}, "Approved", "issued"},
		{"kubelet-serving", certificatesv1.KubeletServingSignerName, x509.CertificateRequest{Subject: node, DNSNames: []string{"n1"}}, usages{sig, server}, "Approved", "issued"},
		{"server-usage", certificatesv1.KubeAPIServerClientSignerName, x509.CertificateRequest{}, usages{server}, "Approved", "invalid usage for client certificate: server auth"},
		{"kubelet-org", certificatesv1.KubeAPIServerClientKubeletSignerName, x509.CertificateRequest{Subject: pkix.Name{CommonName: "system:node:n1"}}, usages{sig, client}, "Approved", "subject organization is not system:nodes"},
		{"pending", certificatesv1.KubeAPIServerClientSignerName, x509.CertificateRequest{}, usages{client}, "", "left"},
		{"denied", certificatesv1.KubeAPIServerClientSignerName, x509.CertificateRequest{}, usages{client}, "Denied", "left"},
		{"other-signer", "example.com/signer", x509.CertificateRequest{}, usages{client}, "Approved", "left"},
	}
	for _, c := range cases {
		create(t, cs, c)
	}
	for _, c := range cases {
		if c.outcome != "left" {
			checkOutcome(t, cs, bundle, c)
		}
	}
	time.Sleep(300 * time.Millisecond) // the queue has had its chance at the rest
	for _, c := range cases {
		if c.outcome == "left" {
			checkOutcome(t, cs, bundle, c)
		}
	}
}

func create(t *testing.T, cs kubernetes.Interface, c signCase) {
	t.Helper()
	csrs := cs.CertificatesV1().CertificateSigningRequests()
	obj, err := csrs.Create(t.Context(), &certificatesv1.CertificateSigningRequest{ObjectMeta: metav1.ObjectMeta{Name: c.name},
		Spec: certificatesv1.CertificateSigningRequestSpec{Request: requestPEM(t, &c.req), SignerName: c.signer, Usages: c.usages,
			ExpirationSeconds: ptr.To(int32(3600))}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create %s: %v", c.name, err)
	}
	if c.decision == "" {
		return
	}
	obj.Status.Conditions = []certificatesv1.CertificateSigningRequestCondition{{Type: c.decision, Status: corev1.ConditionTrue, Reason: "Test"}}
	if _, err := csrs.UpdateApproval(t.Context(), c.name, obj, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("%s %s: %v", c.decision, c.name, err)
	}
}

// checkOutcome waits for c's outcome; an issued certificate must chain to
// the CA with the requested subject, usages and lifetime.
func checkOutcome(t *testing.T, cs kubernetes.Interface, bundle *pki.Bundle, c signCase) {
	t.Helper()
	var last error
	for end := time.Now().Add(10 * time.Second); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
		got, err := cs.CertificatesV1().CertificateSigningRequests().Get(context.Background(), c.name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if last = outcome(got, bundle, c); last == nil {
			return
		}
	}
	t.Fatalf("%s: %v", c.name, last)
}

func outcome(got *certificatesv1.CertificateSigningRequest, bundle *pki.Bundle, c signCase) error {
	failed := slices.IndexFunc(got.Status.Conditions, func(cd certificatesv1.CertificateSigningRequestCondition) bool {
		return cd.Type == certificatesv1.CertificateFailed
	})
	switch c.outcome {
	case "left":
		if failed >= 0 || len(got.Status.Certificate) > 0 {
			return fmt.Errorf("touched: %+v", got.Status)
		}
		return nil
	case "issued":
		if failed >= 0 {
			return fmt.Errorf("failed: %+v", got.Status.Conditions)
		}
		return checkCertificate(got, bundle, c)
	}
	if failed < 0 || len(got.Status.Certificate) > 0 {
		return fmt.Errorf("not failed: %+v", got.Status)
	}
	if cd := got.Status.Conditions[failed]; cd.Reason != "SignerValidationFailure" || !strings.Contains(cd.Message, c.outcome) {
		return fmt.Errorf("failure %+v, want message %q", cd, c.outcome)
	}
	return nil
}

func checkCertificate(got *certificatesv1.CertificateSigningRequest, bundle *pki.Bundle, c signCase) error {
	blk, _ := pem.Decode(got.Status.Certificate)
	if blk == nil {
		return fmt.Errorf("no certificate yet: %+v", got.Status.Conditions)
	}
	cert, err := x509.ParseCertificate(blk.Bytes)
	if err != nil {
		return err
	}
	_, wantExt, _ := keyUsages(c.usages)
	if _, err := cert.Verify(x509.VerifyOptions{Roots: bundle.CAPool(), KeyUsages: wantExt}); err != nil {
		return fmt.Errorf("does not chain to the CA: %w", err)
	}
	if cert.IsCA || cert.Subject.CommonName != c.req.Subject.CommonName || !slices.Equal(cert.Subject.Organization, c.req.Subject.Organization) ||
		!slices.Equal(cert.DNSNames, c.req.DNSNames) || cert.NotAfter.Sub(cert.NotBefore) != time.Hour+5*time.Minute {
		return fmt.Errorf("certificate %v %v..%v", cert.Subject, cert.NotBefore, cert.NotAfter)
	}
	return nil
}
