package integration

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/orch/orch/test/testutil"
)

// TestCertificateRotate stops a real server, runs `orch certificate
// rotate`, starts it again and checks it serves the rotated serving
// certificate (new serial, same CA) and that the admin kubeconfig it wrote
// still works.
func TestCertificateRotate(t *testing.T) {
	t.Parallel()
	s := testutil.StartServer(t, testutil.Options{Quiet: true})
	addr := fmt.Sprintf("127.0.0.1:%d", s.HTTPSPort)
	tlsDir := filepath.Join(s.DataDir, "server", "tls")
	before := servedSerial(t, addr, tlsDir)
	if err := s.Stop(); err != nil {
		t.Logf("orch server exited with %v on stop", err)
	}
	out := orchCLI(t, "certificate", "rotate", "--data-dir", s.DataDir)
	for _, name := range []string{"serving", "peer", "admin", "front-proxy-client"} {
		if !strings.Contains(out, "rotated "+name+" ") {
			t.Errorf("rotate did not report %s:\n%s", name, out)
		}
	}
	onDisk := fileSerial(t, filepath.Join(tlsDir, "serving.crt"))
	if onDisk == before {
		t.Fatal("serving.crt was not rotated")
	}
	s.Restart()
	if got := servedSerial(t, addr, tlsDir); got != onDisk {
		t.Fatalf("the restarted server serves serial %s, want the rotated %s", got, onDisk)
	}
	if _, err := s.Clientset.Discovery().ServerVersion(); err != nil {
		t.Fatalf("admin kubeconfig after rotation: %v", err)
	}
}

func servedSerial(t *testing.T, addr, tlsDir string) string {
	t.Helper()
	caPEM, err := os.ReadFile(filepath.Join(tlsDir, "ca.crt"))
	must(t, err, "read CA")
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(caPEM)
	c, err := tls.Dial("tcp", addr, &tls.Config{RootCAs: pool, ServerName: "kubernetes", MinVersion: tls.VersionTLS12})
	must(t, err, "TLS dial %s", addr)
	defer c.Close()
	return c.ConnectionState().PeerCertificates[0].SerialNumber.String()
}

func fileSerial(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	must(t, err, "read %s", path)
	blk, _ := pem.Decode(b)
	if blk == nil {
		t.Fatalf("%s holds no PEM", path)
	}
	c, err := x509.ParseCertificate(blk.Bytes)
	must(t, err, "parse %s", path)
	return c.SerialNumber.String()
}
