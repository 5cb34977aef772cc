package certificates

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"strings"
	"testing"

	certificatesv1 "k8s.io/api/certificates/v1"
	"k8s.io/utils/ptr"
)

func request(t *testing.T) []byte {
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{Subject: pkix.Name{CommonName: "a"}}, key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der})
}

func TestValidateCreate(t *testing.T) {
	good := func() *certificatesv1.CertificateSigningRequest {
		return &certificatesv1.CertificateSigningRequest{Spec: certificatesv1.CertificateSigningRequestSpec{Request: request(t),
			SignerName: "example.com/signer", Usages: []certificatesv1.KeyUsage{"client auth"}}}
	}
	for _, c := range []struct {
		name, field string
		mod         func(*certificatesv1.CertificateSigningRequest)
	}{
		{"valid", "", func(*certificatesv1.CertificateSigningRequest) {}},
		{"no request", "spec.request", func(c *certificatesv1.CertificateSigningRequest) { c.Spec.Request = nil }},
		{"not a request", "spec.request", func(c *certificatesv1.CertificateSigningRequest) { c.Spec.Request = []byte("x") }},
		{"no signer", "spec.signerName", func(c *certificatesv1.CertificateSigningRequest) { c.Spec.SignerName = "" }},
		{"signer without path", "spec.signerName", func(c *certificatesv1.CertificateSigningRequest) { c.Spec.SignerName = "example.com" }},
		{"short expiration", "spec.expirationSeconds", func(c *certificatesv1.CertificateSigningRequest) { c.Spec.ExpirationSeconds = ptr.To(int32(60)) }},
		{"unknown usage", "spec.usages[0]", func(c *certificatesv1.CertificateSigningRequest) { c.Spec.Usages = []certificatesv1.KeyUsage{"x"} }},
		{"duplicate usage", "spec.usages[1]", func(c *certificatesv1.CertificateSigningRequest) {
			c.Spec.Usages = []certificatesv1.KeyUsage{"client auth", "client auth"}
		}},
	} {
		csr := good()
		c.mod(csr)
		errs := validateCreate(csr)
		if c.field == "" && len(errs) > 0 || c.field != "" && (len(errs) == 0 || !strings.HasPrefix(errs[0].Field, c.field)) {
			t.Errorf("%s: %v", c.name, errs)
		}
	}
}

func TestValidateUpdate(t *testing.T) {
	cond := func(ts ...certificatesv1.RequestConditionType) []certificatesv1.CertificateSigningRequestCondition {
		var out []certificatesv1.CertificateSigningRequestCondition
		for _, ty := range ts {
			out = append(out, certificatesv1.CertificateSigningRequestCondition{Type: ty, Status: "True"})
		}
		return out
	}
	csr := func(cert string, ts ...certificatesv1.RequestConditionType) *certificatesv1.CertificateSigningRequest {
		return &certificatesv1.CertificateSigningRequest{Status: certificatesv1.CertificateSigningRequestStatus{Conditions: cond(ts...), Certificate: []byte(cert)}}
	}
	for _, c := range []struct {
		name     string
		new, old *certificatesv1.CertificateSigningRequest
		want     string
	}{
		{"approve", csr("", "Approved"), csr(""), ""},
		{"approved and denied", csr("", "Approved", "Denied"), csr(""), "mutually exclusive"},
		{"remove approval", csr(""), csr("", "Approved"), `may not remove a condition of type "Approved"`},
		{"bad certificate", csr("x", "Approved"), csr("", "Approved"), "at least one CERTIFICATE"},
		{"change certificate", csr("y", "Approved"), csr("x", "Approved"), "may not modify existing certificate"},
	} {
		errs := validateUpdate(c.new, c.old)
		if c.want == "" && len(errs) > 0 || c.want != "" && (len(errs) == 0 || !strings.Contains(errs.ToAggregate().Error(), c.want)) {
			t.Errorf("%s: %v", c.name, errs)
		}
	}
}
