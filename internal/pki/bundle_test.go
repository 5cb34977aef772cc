package pki

import (
	"crypto/x509"
	"net"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"
)

func testOpts(t *testing.T) Options {
	t.Helper()
	return Options{
		Hostname: "TestHost",
		Logger:   zaptest.NewLogger(t),
		HostIPs: func() ([]net.IP, error) {
			return []net.IP{net.ParseIP("192.0.2.10"), net.ParseIP("127.0.0.1"), net.ParseIP("fe80::1"), net.ParseIP("2001:db8::7")}, nil
		},
	}
}

func mustLoad(t *testing.T, dir string, o Options) *Bundle {
	t.Helper()
	b, err := LoadOrCreate(dir, o)
	if err != nil {
		t.Fatalf("LoadOrCreate: %v", err)
	}
	return b
}

func TestLoadOrCreateReusesEverything(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "tls")
	b1 := mustLoad(t, dir, testOpts(t))
	b2 := mustLoad(t, dir, testOpts(t))
	if string(b1.CAPEM()) != string(b2.CAPEM()) {
		t.Fatal("CA changed across runs")
	}
	for _, pair := range [][2]*keyPair{{b1.leaves.get(LeafServing), b2.leaves.get(LeafServing)}, {b1.leaves.get(LeafPeer), b2.leaves.get(LeafPeer)}, {b1.leaves.get(LeafAdmin), b2.leaves.get(LeafAdmin)}} {
		if pair[0].cert.SerialNumber.Cmp(pair[1].cert.SerialNumber) != 0 {
			t.Errorf("certificate %q re-issued without reason", pair[0].cert.Subject.CommonName)
		}
	}
	if got := b2.CACert().NotAfter.Sub(b2.CACert().NotBefore); got < 10*365*24*time.Hour {
		t.Errorf("CA validity %v, want >= 10 years", got)
	}
}

func TestSANChangeRegeneratesServingAndPeer(t *testing.T) {
	dir := t.TempDir()
	b1 := mustLoad(t, dir, testOpts(t))
	o := testOpts(t)
	o.TLSSANs = []string{"orch.example.com", "198.51.100.4"}
	b2 := mustLoad(t, dir, o)
	if string(b1.CAPEM()) != string(b2.CAPEM()) {
		t.Fatal("CA changed")
	}
	if b1.leaves.get(LeafServing).cert.SerialNumber.Cmp(b2.leaves.get(LeafServing).cert.SerialNumber) == 0 {
		t.Fatal("serving certificate not re-issued after a SAN change")
	}
	if b1.leaves.get(LeafPeer).cert.SerialNumber.Cmp(b2.leaves.get(LeafPeer).cert.SerialNumber) == 0 {
		t.Fatal("peer certificate not re-issued after a SAN change")
	}
	if b1.leaves.get(LeafAdmin).cert.SerialNumber.Cmp(b2.leaves.get(LeafAdmin).cert.SerialNumber) != 0 {
		t.Fatal("admin certificate re-issued although it has no SANs")
	}
	if err := b2.leaves.get(LeafServing).cert.VerifyHostname("orch.example.com"); err != nil {
		t.Errorf("new DNS SAN missing: %v", err)
	}
	if err := b2.leaves.get(LeafServing).cert.VerifyHostname("198.51.100.4"); err != nil {
		t.Errorf("new IP SAN missing: %v", err)
	}
}

func TestNearExpiryRegenerates(t *testing.T) {
	dir := t.TempDir()
	b1 := mustLoad(t, dir, testOpts(t))
	o := testOpts(t)
	o.Now = func() time.Time { return time.Now().Add(300 * 24 * time.Hour) }
	b2 := mustLoad(t, dir, o)
	if b1.leaves.get(LeafServing).cert.SerialNumber.Cmp(b2.leaves.get(LeafServing).cert.SerialNumber) == 0 {
		t.Fatal("serving certificate within 90 days of expiry was kept")
	}
	if string(b1.CAPEM()) != string(b2.CAPEM()) {
		t.Fatal("CA changed")
	}
}

func TestCorruptLeafIsRepairedButHalfCAIsRefused(t *testing.T) {
	dir := t.TempDir()
	b1 := mustLoad(t, dir, testOpts(t))
	if err := os.WriteFile(filepath.Join(dir, ServingKeyFile), []byte("garbage"), 0o600); err != nil {
		t.Fatal(err)
	}
	b2 := mustLoad(t, dir, testOpts(t))
	if b1.leaves.get(LeafServing).cert.SerialNumber.Cmp(b2.leaves.get(LeafServing).cert.SerialNumber) == 0 {
		t.Fatal("corrupt serving key not repaired")
	}
	if err := os.Remove(filepath.Join(dir, CAKeyFile)); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadOrCreate(dir, testOpts(t)); err == nil {
		t.Fatal("LoadOrCreate accepted a CA without its key")
	}
}

func TestFileModes(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "server", "tls")
	mustLoad(t, dir, testOpts(t))
	want := map[string]os.FileMode{
		".": 0o700, CAKeyFile: 0o600, ServingKeyFile: 0o600, PeerKeyFile: 0o600, AdminKeyFile: 0o600,
		CACertFile: 0o644, ServingCertFile: 0o644,
	}
	for name, mode := range want {
		st, err := os.Stat(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if got := st.Mode().Perm(); got != mode {
			t.Errorf("%s: mode %o, want %o", name, got, mode)
		}
	}
}

func TestWantedSANs(t *testing.T) {
	o := testOpts(t)
	o.AdvertiseAddress = "203.0.113.5"
	o.TLSSANs = []string{"API.Example.com.", "10.0.0.9"}
	got, err := WantedSANs(o)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"testhost", "localhost", "api.example.com", "kubernetes", "kubernetes.default",
		"kubernetes.default.svc", "kubernetes.default.svc.cluster.local"} {
		if !slices.Contains(got.DNSNames, d) {
			t.Errorf("DNS SAN %q missing from %v", d, got.DNSNames)
		}
	}
	ips := ipStrings(got.IPs)
	for _, ip := range []string{"127.0.0.1", "::1", "192.0.2.10", "2001:db8::7", "203.0.113.5", "10.0.0.9", "10.43.0.1"} {
		if !slices.Contains(ips, ip) {
			t.Errorf("IP SAN %s missing from %v", ip, ips)
		}
	}
	if slices.Contains(ips, "fe80::1") {
		t.Errorf("link-local address in SANs: %v", ips)
	}
}

// TestWantedSANsBoundAddress: a server bound to one address is reached on
// it alone, so the interface addresses stay out of its certificates.
func TestWantedSANsBoundAddress(t *testing.T) {
	for _, tt := range []struct {
		bind      string
		want, not []string
	}{
		{bind: "198.51.100.4", want: []string{"198.51.100.4", "127.0.0.1", "10.43.0.1"}, not: []string{"192.0.2.10", "2001:db8::7"}},
		{bind: "0.0.0.0", want: []string{"192.0.2.10", "2001:db8::7"}},
		{bind: "::", want: []string{"192.0.2.10", "2001:db8::7"}},
		{bind: "", want: []string{"192.0.2.10", "2001:db8::7"}},
	} {
		o := testOpts(t)
		o.BindAddress = tt.bind
		got, err := WantedSANs(o)
		if err != nil {
			t.Fatal(err)
		}
		ips := ipStrings(got.IPs)
		for _, ip := range tt.want {
			if !slices.Contains(ips, ip) {
				t.Errorf("bind %q: IP SAN %s missing from %v", tt.bind, ip, ips)
			}
		}
		for _, ip := range tt.not {
			if slices.Contains(ips, ip) {
				t.Errorf("bind %q: interface address %s in %v", tt.bind, ip, ips)
			}
		}
	}
}

func TestFirstServiceIP(t *testing.T) {
	tests := []struct{ cidr, want string }{
		{"", "10.43.0.1"}, {"10.43.0.0/16", "10.43.0.1"}, {"10.96.5.7/12", "10.96.0.1"}, {"fd00:43::/112", "fd00:43::1"},
	}
	for _, tt := range tests {
		got, err := firstServiceIP(tt.cidr)
		if err != nil || got.String() != tt.want {
			t.Errorf("firstServiceIP(%q) = %v, %v; want %s", tt.cidr, got, err, tt.want)
		}
	}
	for _, bad := range []string{"10.43.0.0", "nonsense", "10.0.0.1/32"} {
		if _, err := firstServiceIP(bad); err == nil {
			t.Errorf("firstServiceIP(%q) accepted", bad)
		}
	}
}

func TestChainsVerify(t *testing.T) {
	b := mustLoad(t, t.TempDir(), testOpts(t))
	roots := b.CAPool()
	verify := func(name string, c *x509.Certificate, host string, usage x509.ExtKeyUsage) {
		t.Helper()
		if _, err := c.Verify(x509.VerifyOptions{Roots: roots, DNSName: host, KeyUsages: []x509.ExtKeyUsage{usage}}); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	verify("serving", b.leaves.get(LeafServing).cert, "kubernetes.default.svc.cluster.local", x509.ExtKeyUsageServerAuth)
	verify("serving by IP", b.leaves.get(LeafServing).cert, "10.43.0.1", x509.ExtKeyUsageServerAuth)
	verify("peer as server", b.leaves.get(LeafPeer).cert, PeerServerName, x509.ExtKeyUsageServerAuth)
	verify("peer as client", b.leaves.get(LeafPeer).cert, "", x509.ExtKeyUsageClientAuth)
	verify("admin", b.leaves.get(LeafAdmin).cert, "", x509.ExtKeyUsageClientAuth)
	if b.leaves.get(LeafAdmin).cert.Subject.CommonName != AdminUser || !slices.Equal(b.leaves.get(LeafAdmin).cert.Subject.Organization, []string{AdminGroup}) {
		t.Errorf("admin subject %v", b.leaves.get(LeafAdmin).cert.Subject)
	}
	certPEM, keyPEM, err := b.IssueClientCert("system:node:n1", []string{"system:nodes"})
	if err != nil {
		t.Fatal(err)
	}
	kp, err := parseKeyPair(certPEM, keyPEM)
	if err != nil {
		t.Fatal(err)
	}
	verify("node", kp.cert, "", x509.ExtKeyUsageClientAuth)
	if kp.cert.Subject.CommonName != "system:node:n1" || kp.cert.Subject.Organization[0] != "system:nodes" {
		t.Errorf("node subject %v", kp.cert.Subject)
	}
	if _, _, err := b.IssueClientCert("", nil); err == nil {
		t.Error("IssueClientCert accepted an empty CN")
	}
}
