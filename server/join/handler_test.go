package join

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest"
	"go.uber.org/zap/zaptest/observer"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/orch/orch/internal/pki"
)

const testSecret = "topsecret-123"

func newTestHandler(t *testing.T, limits Limits) (*Handler, *pki.Bundle, *observer.ObservedLogs) {
	t.Helper()
	b, err := pki.LoadOrCreate(filepath.Join(t.TempDir(), "tls"), pki.Options{
		Hostname: "h", Logger: zaptest.NewLogger(t),
		HostIPs: func() ([]net.IP, error) { return []net.IP{net.ParseIP("127.0.0.1")}, nil },
	})
	if err != nil {
		t.Fatal(err)
	}
	core, logs := observer.New(zapcore.DebugLevel)
	h, err := New(Config{CA: b, Token: pki.FormatToken(pki.CAHash(b.CAPEM()), testSecret), Logger: zap.New(core), Limits: limits})
	if err != nil {
		t.Fatal(err)
	}
	return h, b, logs
}

func testCSR(t *testing.T) string {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{
		Subject: pkix.Name{CommonName: "system:masters-wannabe", Organization: []string{"system:masters"}}}, key)
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der}))
}

func post(h http.Handler, authz, body, remote string) *httptest.ResponseRecorder {
	r := httptest.NewRequest(http.MethodPost, NodeCertificatePath, strings.NewReader(body))
	if authz != "" {
		r.Header.Set("Authorization", authz)
	}
	r.RemoteAddr = remote
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

func TestNodeCertificate(t *testing.T) {
	h, b, logs := newTestHandler(t, Limits{})
	csr := testCSR(t)
	body := func(name, csr string) string {
		d, _ := json.Marshal(NodeCertificateRequest{NodeName: name, CSRPEM: csr})
		return string(d)
	}
	tests := []struct {
		name, authz, body string
		code              int
		msg               string
	}{
		{"ok", "Bearer " + testSecret, body("node-1", csr), 200, ""},
		{"full token as bearer", "Bearer " + pki.FormatToken(pki.CAHash(b.CAPEM()), testSecret), body("node-1", csr), 200, ""},
		{"no header", "", body("node-1", csr), 401, "Authorization: Bearer"},
		{"basic auth", "Basic " + testSecret, body("node-1", csr), 401, "Authorization: Bearer"},
		{"wrong secret", "Bearer nope", body("node-1", csr), 401, "secret is wrong"},
		{"bad node name", "Bearer " + testSecret, body("Node_1", csr), 400, "not a valid node name"},
		{"empty node name", "Bearer " + testSecret, body("", csr), 400, "not a valid node name"},
		{"bad csr", "Bearer " + testSecret, body("node-1", "garbage"), 400, "csrPEM"},
		{"not json", "Bearer " + testSecret, "{", 400, "must be JSON"},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := post(h, tt.authz, tt.body, "192.0.2."+string(rune('1'+i))+":1234")
			if w.Code != tt.code {
				t.Fatalf("code %d want %d: %s", w.Code, tt.code, w.Body)
			}
			if tt.code == 200 {
				checkIssued(t, b, w.Body.Bytes())
				return
			}
			var st metav1.Status
			if err := json.Unmarshal(w.Body.Bytes(), &st); err != nil || st.Kind != "Status" || int(st.Code) != tt.code {
				t.Fatalf("body is not a Status with code %d: %s", tt.code, w.Body)
			}
			if !strings.Contains(st.Message, tt.msg) {
				t.Errorf("message %q does not mention %q", st.Message, tt.msg)
			}
		})
	}
	for _, e := range logs.All() {
		if line, _ := json.Marshal(e.ContextMap()); strings.Contains(e.Message+string(line), testSecret) {
			t.Errorf("a log entry contains the secret: %s %s", e.Message, line)
		}
	}
}

func checkIssued(t *testing.T, b *pki.Bundle, body []byte) {
	t.Helper()
	var resp NodeCertificateResponse
	if err := json.Unmarshal(body, &resp); err != nil {
		t.Fatal(err)
	}
	if resp.CAPEM != string(b.CAPEM()) {
		t.Error("caPEM is not the cluster CA")
	}
	blk, _ := pem.Decode([]byte(resp.CertificatePEM))
	cert, err := x509.ParseCertificate(blk.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	if cert.Subject.CommonName != "system:node:node-1" || strings.Join(cert.Subject.Organization, ",") != "system:nodes" {
		t.Errorf("subject %v, want CN=system:node:node-1 O=system:nodes", cert.Subject)
	}
}

func TestFailuresAreRateLimited(t *testing.T) {
	h, _, _ := newTestHandler(t, Limits{PerIP: 0.001, PerIPBurst: 3, Global: 1000, GlobalBurst: 1000})
	for i := range 3 {
		if w := post(h, "Bearer wrong", "{}", "192.0.2.7:1"); w.Code != 401 {
			t.Fatalf("attempt %d: %d", i, w.Code)
		}
	}
	w := post(h, "Bearer "+testSecret, "{}", "192.0.2.7:2")
	if w.Code != http.StatusTooManyRequests || w.Header().Get("Retry-After") == "" {
		t.Fatalf("after the burst: %d %s (Retry-After %q)", w.Code, w.Body, w.Header().Get("Retry-After"))
	}
	if w := post(h, "Bearer "+testSecret, "{}", "192.0.2.8:1"); w.Code != http.StatusBadRequest {
		t.Fatalf("another address must not be limited: %d %s", w.Code, w.Body)
	}
}

func TestGlobalLimit(t *testing.T) {
	h, _, _ := newTestHandler(t, Limits{PerIP: 1000, PerIPBurst: 1000, Global: 0.001, GlobalBurst: 2})
	post(h, "Bearer wrong", "{}", "192.0.2.1:1")
	post(h, "Bearer wrong", "{}", "192.0.2.2:1")
	if w := post(h, "Bearer wrong", "{}", "192.0.2.3:1"); w.Code != http.StatusTooManyRequests {
		t.Fatalf("global limit not applied: %d", w.Code)
	}
}

func TestRoutes(t *testing.T) {
	h, b, _ := newTestHandler(t, Limits{})
	next := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusTeapot) })
	tests := []struct {
		method, path string
		code         int
	}{
		{"GET", CACertsPath, 200},
		{"POST", CACertsPath, 405},
		{"GET", NodeCertificatePath, 405},
		{"GET", "/v1-orch/unknown", 404},
		{"GET", "/api/v1/nodes", http.StatusTeapot},
		{"GET", "/cacertsx", http.StatusTeapot},
	}
	for _, tt := range tests {
		w := httptest.NewRecorder()
		h.Wrap(next).ServeHTTP(w, httptest.NewRequest(tt.method, tt.path, nil))
		if w.Code != tt.code {
			t.Errorf("%s %s: %d want %d", tt.method, tt.path, w.Code, tt.code)
		}
		if tt.path == CACertsPath && tt.code == 200 && w.Body.String() != string(b.CAPEM()) {
			t.Error("/cacerts does not serve the CA PEM")
		}
	}
}

func TestNodeServingCertificate(t *testing.T) {
	h, b, _ := newTestHandler(t, Limits{})
	body := func(serving string, ips ...string) string {
		d, _ := json.Marshal(NodeCertificateRequest{NodeName: "node-1", CSRPEM: testCSR(t), ServingCSRPEM: serving, NodeIPs: ips})
		return string(d)
	}
	tests := []struct {
		name, body string
		code       int
		msg        string
	}{
		{"ipv4 and ipv6", body(testCSR(t), "192.0.2.10", "2001:db8::10"), 200, ""},
		{"mapped ipv4", body(testCSR(t), "::ffff:192.0.2.11"), 200, ""},
		{"no ips", body(testCSR(t)), 200, ""},
		{"not an ip", body(testCSR(t), "192.0.2.300"), 400, `nodeIPs[0]: "192.0.2.300" is not an IP address`},
		{"hostname", body(testCSR(t), "192.0.2.1", "node-1.example"), 400, "nodeIPs[1]"},
		{"unspecified", body(testCSR(t), "0.0.0.0"), 400, "unspecified or multicast"},
		{"unspecified v6", body(testCSR(t), "::"), 400, "unspecified or multicast"},
		{"multicast", body(testCSR(t), "224.0.0.1"), 400, "unspecified or multicast"},
		{"zone", body(testCSR(t), "fe80::1%eth0"), 400, "zone"},
		{"duplicate", body(testCSR(t), "192.0.2.1", "192.0.2.1"), 400, "given twice"},
		{"ips without csr", body("", "192.0.2.1"), 400, "only allowed together with servingCSRPEM"},
		{"bad serving csr", body("garbage", "192.0.2.1"), 400, "servingCSRPEM"},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := post(h, "Bearer "+testSecret, tt.body, fmt.Sprintf("198.51.100.%d:1234", i+1))
			if w.Code != tt.code {
				t.Fatalf("code %d want %d: %s", w.Code, tt.code, w.Body)
			}
			if tt.code != 200 {
				var st metav1.Status
				if err := json.Unmarshal(w.Body.Bytes(), &st); err != nil || st.Kind != "Status" || !strings.Contains(st.Message, tt.msg) {
					t.Fatalf("want a Status mentioning %q, got %s", tt.msg, w.Body)
				}
				return
			}
			var req NodeCertificateRequest
			_ = json.Unmarshal([]byte(tt.body), &req)
			checkServing(t, b, w.Body.Bytes(), req.NodeIPs)
		})
	}
}

// checkServing verifies the serving certificate for server auth with the
// node name and each requested IP, and that it is no client certificate.
func checkServing(t *testing.T, b *pki.Bundle, body []byte, ips []string) {
	t.Helper()
	var resp NodeCertificateResponse
	if err := json.Unmarshal(body, &resp); err != nil {
		t.Fatal(err)
	}
	blk, _ := pem.Decode([]byte(resp.ServingCertificatePEM))
	if blk == nil {
		t.Fatalf("no serving certificate in %s", body)
	}
	cert, err := x509.ParseCertificate(blk.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	if cert.Subject.CommonName != "system:node:node-1" || strings.Join(cert.Subject.Organization, ",") != "system:nodes" {
		t.Errorf("subject %v", cert.Subject)
	}
	if strings.Join(cert.DNSNames, ",") != "node-1" || len(cert.IPAddresses) != len(ips) {
		t.Errorf("SANs %v %v, want node-1 and %v", cert.DNSNames, cert.IPAddresses, ips)
	}
	for _, name := range append([]string{"node-1"}, ips...) {
		if ip, err := netip.ParseAddr(name); err == nil {
			name = ip.Unmap().String()
		}
		opts := x509.VerifyOptions{DNSName: name, Roots: b.CAPool(), KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
		if _, err := cert.Verify(opts); err != nil {
			t.Errorf("serving certificate for %s: %v", name, err)
		}
	}
	opts := x509.VerifyOptions{Roots: b.CAPool(), KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}
	if _, err := cert.Verify(opts); err == nil {
		t.Error("serving certificate is accepted for client auth")
	}
}

func TestOldClientGetsNoServingCertificate(t *testing.T) {
	h, _, _ := newTestHandler(t, Limits{})
	w := post(h, "Bearer "+testSecret, `{"nodeName":"node-1","csrPEM":`+strconv.Quote(testCSR(t))+`}`, "203.0.113.1:1")
	if w.Code != 200 {
		t.Fatalf("old-style request: %d %s", w.Code, w.Body)
	}
	if strings.Contains(w.Body.String(), "servingCertificatePEM") {
		t.Errorf("old client got a serving certificate field: %s", w.Body)
	}
}
