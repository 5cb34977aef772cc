package certificates

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"strings"
	"testing"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	"k8s.io/utils/ptr"

	"github.com/orch/orch/server/registry"
)

func request(t *testing.T) []byte {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{Subject: pkix.Name{CommonName: "a"}}, key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der})
}

// certificate is a self-signed PEM certificate.
func certificate(t *testing.T) []byte {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "a"},
		NotBefore: time.Now(), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}

func validCSR(t *testing.T) *certificatesv1.CertificateSigningRequest {
	return &certificatesv1.CertificateSigningRequest{Spec: certificatesv1.CertificateSigningRequestSpec{Request: request(t),
		SignerName: "example.com/signer", Usages: []certificatesv1.KeyUsage{"client auth"}}}
}

func conds(ts ...certificatesv1.RequestConditionType) []certificatesv1.CertificateSigningRequestCondition {
	var out []certificatesv1.CertificateSigningRequestCondition
	for _, ty := range ts {
		out = append(out, certificatesv1.CertificateSigningRequestCondition{Type: ty, Status: "True"})
	}
	return out
}

// wantErr fails unless errs is empty (want "") or names want in a field
// or message.
func wantErr(t *testing.T, name, want string, errs interface{ Error() string }, n int) {
	t.Helper()
	switch {
	case want == "" && n > 0:
		t.Errorf("%s: unexpected errors: %v", name, errs)
	case want != "" && (n == 0 || !strings.Contains(errs.Error(), want)):
		t.Errorf("%s: want an error about %q, got %v", name, want, errs)
	}
}

func TestValidateCreate(t *testing.T) {
	pemCert := certificate(t)
	for _, c := range []struct {
		name, want string
		mod        func(*certificatesv1.CertificateSigningRequest)
	}{
		{"valid", "", func(*certificatesv1.CertificateSigningRequest) {}},
		{"no request", "spec.request", func(c *certificatesv1.CertificateSigningRequest) { c.Spec.Request = nil }},
		{"not a request", "spec.request", func(c *certificatesv1.CertificateSigningRequest) { c.Spec.Request = []byte("x") }},
		{"certificate as request", "PEM block type must be CERTIFICATE REQUEST", func(c *certificatesv1.CertificateSigningRequest) { c.Spec.Request = pemCert }},
		{"no signer", "spec.signerName: Required", func(c *certificatesv1.CertificateSigningRequest) { c.Spec.SignerName = "" }},
		{"legacy signer", "legacy signerName is not allowed", func(c *certificatesv1.CertificateSigningRequest) {
			c.Spec.SignerName = "kubernetes.io/legacy-unknown"
		}},
		{"short expiration", "spec.expirationSeconds", func(c *certificatesv1.CertificateSigningRequest) { c.Spec.ExpirationSeconds = ptr.To(int32(599)) }},
		{"ten minutes", "", func(c *certificatesv1.CertificateSigningRequest) { c.Spec.ExpirationSeconds = ptr.To(int32(600)) }},
		{"no usages", "spec.usages: Required", func(c *certificatesv1.CertificateSigningRequest) { c.Spec.Usages = nil }},
		{"unknown usage", "spec.usages[0]: Unsupported", func(c *certificatesv1.CertificateSigningRequest) { c.Spec.Usages = []certificatesv1.KeyUsage{"x"} }},
		{"duplicate usage", "spec.usages[1]: Duplicate", func(c *certificatesv1.CertificateSigningRequest) {
			c.Spec.Usages = []certificatesv1.KeyUsage{"client auth", "client auth"}
		}},
		{"every known usage", "", func(c *certificatesv1.CertificateSigningRequest) {
			c.Spec.Usages = nil
			for _, u := range knownUsages().UnsortedList() {
				c.Spec.Usages = append(c.Spec.Usages, certificatesv1.KeyUsage(u))
			}
		}},
	} {
		csr := validCSR(t)
		c.mod(csr)
		errs := validateCreate(csr)
		wantErr(t, c.name, c.want, errs.ToAggregate(), len(errs))
	}
}

func TestValidateSignerName(t *testing.T) {
	long := strings.Repeat("a", 63)
	for name, want := range map[string]string{
		"example.com/signer":                  "",
		"kubernetes.io/kube-apiserver-client": "",
		"example.com/ns.name":                 "",
		"sub.example.com/a.b.c":               "",
		"":                                    "Required",
		"example.com":                         "fully qualified domain and path",
		"example.com/a/b":                     "fully qualified domain and path",
		"example/signer":                      "at least two segments",
		"Example.com/signer":                  `validating label "Example"`,
		"example.com/Signer":                  `validating label "Signer"`,
		"example.com/":                        `validating label ""`,
		"example..com/x":                      `validating label ""`,
		long + "x.com/x":                      "validating label",
		long + "." + long + "." + long + "." + long + "/x": "Too long",
	} {
		errs := registry.ValidateSignerName(name, nil)
		wantErr(t, name, want, errs.ToAggregate(), len(errs))
	}
}

func TestValidateConditions(t *testing.T) {
	type cond = certificatesv1.CertificateSigningRequestCondition
	for _, c := range []struct {
		name  string
		conds []cond
		opts  options
		want  string
	}{
		{"approved", conds("Approved"), options{}, ""},
		{"custom false", []cond{{Type: "Ready", Status: "False"}}, options{}, ""},
		{"no type", []cond{{Status: "True"}}, options{}, "[0].type: Required"},
		{"no status", []cond{{Type: "Approved"}}, options{}, "[0].status: Required"},
		{"approved false", []cond{{Type: "Approved", Status: "False"}}, options{}, `Unsupported value: "False"`},
		{"failed unknown", []cond{{Type: "Failed", Status: "Unknown"}}, options{}, `Unsupported value: "Unknown"`},
		{"bad status", []cond{{Type: "Ready", Status: "Maybe"}}, options{}, `Unsupported value: "Maybe"`},
		{"approved and denied", conds("Approved", "Denied"), options{}, "mutually exclusive"},
		{"approved and denied kept", conds("Approved", "Denied"), options{bothApprovedAndDenied: true}, ""},
		{"duplicate", conds("Failed", "Failed"), options{}, "[1].type: Duplicate"},
		{"duplicate custom", []cond{{Type: "X", Status: "True"}, {Type: "X", Status: "False"}}, options{}, "[1].type: Duplicate"},
		{"duplicate kept", conds("Failed", "Failed"), options{duplicateConditions: true}, ""},
	} {
		errs := validateConditions(c.conds, nil, c.opts)
		wantErr(t, c.name, c.want, errs.ToAggregate(), len(errs))
	}
}

func TestValidateUpdate(t *testing.T) {
	certA, certB := string(certificate(t)), string(certificate(t))
	csr := func(cert string, ts ...certificatesv1.RequestConditionType) *certificatesv1.CertificateSigningRequest {
		c := validCSR(t)
		c.Status = certificatesv1.CertificateSigningRequestStatus{Conditions: conds(ts...), Certificate: []byte(cert)}
		return c
	}
	legacy := func(c *certificatesv1.CertificateSigningRequest) *certificatesv1.CertificateSigningRequest {
		c.Spec.SignerName = "kubernetes.io/legacy-unknown"
		return c
	}
	for _, c := range []struct {
		name     string
		new, old *certificatesv1.CertificateSigningRequest
		want     string
	}{
		{"approve", csr("", "Approved"), csr(""), ""},
		{"issue", csr(certA, "Approved"), csr("", "Approved"), ""},
		{"issue a chain", csr(certA+certB, "Approved"), csr("", "Approved"), ""},
		{"approved and denied", csr("", "Approved", "Denied"), csr(""), "mutually exclusive"},
		{"remove approval", csr(""), csr("", "Approved"), `may not remove a condition of type "Approved"`},
		{"remove failure", csr("", "Approved"), csr("", "Approved", "Failed"), `may not remove a condition of type "Failed"`},
		{"not a certificate", csr("x", "Approved"), csr("", "Approved"), "at least one CERTIFICATE"},
		{"key instead of certificate", csr("-----BEGIN EC PRIVATE KEY-----\nAAAA\n-----END EC PRIVATE KEY-----\n", "Approved"),
			csr("", "Approved"), "only CERTIFICATE PEM blocks are allowed"},
		{"garbage certificate", csr("-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n", "Approved"), csr("", "Approved"), "parsing certificate"},
		{"change certificate", csr(certB, "Approved"), csr(certA, "Approved"), "may not modify existing certificate"},
		{"remove certificate", csr("", "Approved"), csr(certA, "Approved"), "may not modify existing certificate"},
		{"legacy signer kept", legacy(csr("", "Approved")), legacy(csr("")), ""},
	} {
		errs := validateUpdate(c.new, c.old)
		wantErr(t, c.name, c.want, errs.ToAggregate(), len(errs))
	}
}

func TestValidateCertificateHeaders(t *testing.T) {
	blk, _ := pem.Decode(certificate(t))
	blk.Headers = map[string]string{"Proc-Type": "4,ENCRYPTED"}
	if err := validateCertificate(pem.EncodeToMemory(blk)); err == nil || !strings.Contains(err.Error(), "headers") {
		t.Fatalf("a PEM block with headers: %v", err)
	}
}
