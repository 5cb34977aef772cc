package pki

import (
	"errors"
	"path/filepath"
	"testing"
	"time"
)

// TestRotate: every leaf (or the named ones) gets a new certificate with
// the same names from the same CA, and the next LoadOrCreate keeps it.
func TestRotate(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "tls")
	b := mustLoad(t, dir, testOpts(t))
	out, err := Rotate(dir, []string{"api-server", "serving"}, time.Now(), nil)
	if err != nil || len(out) != 1 || out[0].Name != LeafServing {
		t.Fatalf("rotate api-server: %+v %v", out, err)
	}
	after := mustLoad(t, dir, testOpts(t))
	oldS, newS := b.leaves.get(LeafServing).cert, after.leaves.get(LeafServing).cert
	if oldS.SerialNumber.Cmp(newS.SerialNumber) == 0 {
		t.Fatal("the next start did not use the rotated serving certificate (or re-issued it)")
	}
	if oldS.Subject.String() != newS.Subject.String() || len(oldS.DNSNames) != len(newS.DNSNames) || len(oldS.IPAddresses) != len(newS.IPAddresses) {
		t.Fatalf("rotated serving certificate changed names: %v %v", newS.Subject, newS.DNSNames)
	}
	if after.leaves.get(LeafAdmin).cert.SerialNumber.Cmp(b.leaves.get(LeafAdmin).cert.SerialNumber) != 0 {
		t.Fatal("rotating api-server touched the admin certificate")
	}
	if string(after.CAPEM()) != string(b.CAPEM()) {
		t.Fatal("the CA changed")
	}
	all, err := Rotate(dir, nil, time.Now(), nil)
	if err != nil || len(all) != 4 {
		t.Fatalf("rotate all: %+v %v", all, err)
	}
	if _, err := Rotate(dir, []string{"kube-proxy"}, time.Now(), nil); !errors.Is(err, ErrUnknownService) {
		t.Fatalf("unknown service: %v", err)
	}
	exp, err := Expiries(dir)
	if err != nil || len(exp) != 6 || exp[1].Name != LeafServing || !exp[1].NotAfter.Equal(all[0].NotAfter) {
		t.Fatalf("Expiries: %+v %v", exp, err)
	}
	if _, err := Expiries(t.TempDir()); err == nil {
		t.Fatal("Expiries of an empty dir succeeded")
	}
	if _, err := Rotate(t.TempDir(), nil, time.Now(), nil); !errors.Is(err, ErrCAIncomplete) {
		t.Fatalf("empty dir: %v", err)
	}
}
