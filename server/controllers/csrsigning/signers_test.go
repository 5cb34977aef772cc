package csrsigning

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"net"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
)

type usages = []certificatesv1.KeyUsage

const (
	sig    = certificatesv1.UsageDigitalSignature
	keyEnc = certificatesv1.UsageKeyEncipherment
	client = certificatesv1.UsageClientAuth
	server = certificatesv1.UsageServerAuth
)

func parsedRequest(t *testing.T, tmpl *x509.CertificateRequest) *x509.CertificateRequest {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.CreateCertificateRequest(rand.Reader, tmpl, key)
	if err != nil {
		t.Fatal(err)
	}
	req, err := x509.ParseCertificateRequest(der)
	if err != nil {
		t.Fatal(err)
	}
	return req
}

func TestSignerChecks(t *testing.T) {
	node := pkix.Name{CommonName: "system:node:n1", Organization: []string{"system:nodes"}}
	u, _ := url.Parse("spiffe://x/y")
	for _, c := range []struct {
		name, signer string
		req          x509.CertificateRequest
		usages       usages
		want         string
	}{
		{"client", certificatesv1.KubeAPIServerClientSignerName, x509.CertificateRequest{Subject: pkix.Name{CommonName: "jane"}}, usages{client}, ""},
		{"client all usages", certificatesv1.KubeAPIServerClientSignerName, x509.CertificateRequest{}, usages{sig, keyEnc, client}, ""},
		{"client with SANs", certificatesv1.KubeAPIServerClientSignerName, x509.CertificateRequest{DNSNames: []string{"a.example"}}, usages{client}, ""},
		{"client without client auth", certificatesv1.KubeAPIServerClientSignerName, x509.CertificateRequest{}, usages{sig}, "missing required usage"},
		{"client with server auth", certificatesv1.KubeAPIServerClientSignerName, x509.CertificateRequest{}, usages{client, server}, "invalid usage for client certificate: server auth"},
		{"client with cert sign", certificatesv1.KubeAPIServerClientSignerName, x509.CertificateRequest{}, usages{client, "cert sign"}, "invalid usage"},
		{"kubelet client", certificatesv1.KubeAPIServerClientKubeletSignerName, x509.CertificateRequest{Subject: node}, usages{sig, client}, ""},
		{"kubelet client RSA", certificatesv1.KubeAPIServerClientKubeletSignerName, x509.CertificateRequest{Subject: node}, usages{keyEnc, client, sig}, ""},
		{"kubelet client org", certificatesv1.KubeAPIServerClientKubeletSignerName, x509.CertificateRequest{Subject: pkix.Name{CommonName: "system:node:n1"}}, usages{sig, client}, "organization is not system:nodes"},
		{"kubelet client CN", certificatesv1.KubeAPIServerClientKubeletSignerName, x509.CertificateRequest{Subject: pkix.Name{CommonName: "n1", Organization: []string{"system:nodes"}}}, usages{sig, client}, "does not begin with system:node:"},
		{"kubelet client DNS", certificatesv1.KubeAPIServerClientKubeletSignerName, x509.CertificateRequest{Subject: node, DNSNames: []string{"n1"}}, usages{sig, client}, "DNS subjectAltNames"},
		{"kubelet client IP", certificatesv1.KubeAPIServerClientKubeletSignerName, x509.CertificateRequest{Subject: node, IPAddresses: []net.IP{net.IPv4(1, 2, 3, 4)}}, usages{sig, client}, "IP subjectAltNames"},
		{"kubelet client URI", certificatesv1.KubeAPIServerClientKubeletSignerName, x509.CertificateRequest{Subject: node, URIs: []*url.URL{u}}, usages{sig, client}, "URI subjectAltNames"},
		{"kubelet client usages", certificatesv1.KubeAPIServerClientKubeletSignerName, x509.CertificateRequest{Subject: node}, usages{client}, "usages did not match"},
		{"kubelet serving", certificatesv1.KubeletServingSignerName, x509.CertificateRequest{Subject: node, DNSNames: []string{"n1"}}, usages{sig, keyEnc, server}, ""},
		{"kubelet serving no SAN", certificatesv1.KubeletServingSignerName, x509.CertificateRequest{Subject: node}, usages{sig, server}, "DNS or IP subjectAltName is required"},
		{"kubelet serving email", certificatesv1.KubeletServingSignerName, x509.CertificateRequest{Subject: node, DNSNames: []string{"n1"}, EmailAddresses: []string{"a@b.c"}}, usages{sig, server}, "Email subjectAltNames"},
		{"kubelet serving client usage", certificatesv1.KubeletServingSignerName, x509.CertificateRequest{Subject: node, DNSNames: []string{"n1"}}, usages{sig, client}, "usages did not match"},
	} {
		check, ok := signers()[c.signer]
		if !ok {
			t.Fatalf("%s: signer %s not served", c.name, c.signer)
		}
		err := check(parsedRequest(t, &c.req), c.usages)
		if (c.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), c.want)) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
	for _, s := range []string{"kubernetes.io/legacy-unknown", "example.com/x"} {
		if _, ok := signers()[s]; ok {
			t.Errorf("signer %s is served", s)
		}
	}
}

func TestKeyUsages(t *testing.T) {
	ku, eku, err := keyUsages(usages{"signing", keyEnc, client, server, client, "email protection", "s/mime"})
	if err != nil || ku != x509.KeyUsageDigitalSignature|x509.KeyUsageKeyEncipherment ||
		!slices.Equal(eku, []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth, x509.ExtKeyUsageEmailProtection}) {
		t.Fatalf("got %v %v %v", ku, eku, err)
	}
	if _, _, err := keyUsages(usages{"bogus"}); err == nil {
		t.Fatal("an unknown usage was mapped")
	}
}

func TestDuration(t *testing.T) {
	for in, want := range map[int32]time.Duration{600: 10 * time.Minute, 60: 10 * time.Minute, 3600: time.Hour,
		86400: 24 * time.Hour, 2 * 365 * 86400: 365 * 24 * time.Hour} {
		if got := duration(ptr.To(in)); got != want {
			t.Errorf("duration(%d) = %v, want %v", in, got, want)
		}
	}
	if got := duration(nil); got != 365*24*time.Hour {
		t.Errorf("default duration %v", got)
	}
}

func TestPending(t *testing.T) {
	cond := func(ty certificatesv1.RequestConditionType) certificatesv1.CertificateSigningRequestCondition {
		return certificatesv1.CertificateSigningRequestCondition{Type: ty, Status: corev1.ConditionTrue}
	}
	for _, c := range []struct {
		name  string
		conds []certificatesv1.CertificateSigningRequestCondition
		cert  bool
		want  bool
	}{
		{"new", nil, false, false},
		{"approved", []certificatesv1.CertificateSigningRequestCondition{cond("Approved")}, false, true},
		{"issued", []certificatesv1.CertificateSigningRequestCondition{cond("Approved")}, true, false},
		{"failed", []certificatesv1.CertificateSigningRequestCondition{cond("Approved"), cond("Failed")}, false, false},
		{"denied", []certificatesv1.CertificateSigningRequestCondition{cond("Denied")}, false, false},
		{"approved and denied", []certificatesv1.CertificateSigningRequestCondition{cond("Approved"), cond("Denied")}, false, false},
	} {
		csr := &certificatesv1.CertificateSigningRequest{Status: certificatesv1.CertificateSigningRequestStatus{Conditions: c.conds}}
		if c.cert {
			csr.Status.Certificate = []byte("x")
		}
		if got := pending(csr); got != c.want {
			t.Errorf("%s: pending %v", c.name, got)
		}
	}
}
