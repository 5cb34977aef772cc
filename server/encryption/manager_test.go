package encryption

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"go.uber.org/zap/zaptest"

	"github.com/orch/orch/datastore"
)

func TestOpenCreatesConfig(t *testing.T) {
	path := filepath.Join(t.TempDir(), "server", "cred", FileName)
	inner := datastore.NewMemStore(0)
	s, m, err := Open(path, inner, zaptest.NewLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("config file: %v, mode %v; want 0600", err, fi.Mode())
	}
	di, err := os.Stat(filepath.Dir(path))
	if err != nil || di.Mode().Perm() != 0o700 {
		t.Fatalf("cred dir: %v, mode %v; want 0700", err, di.Mode())
	}
	first, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	c, err := Parse(first)
	if err != nil {
		t.Fatal(err)
	}
	if c.Resources[0].Resources[0] != "secrets" || c.Resources[0].Providers[0].AESCBC == nil || c.Resources[0].Providers[1].Identity == nil {
		t.Fatalf("new config %s", first)
	}
	ctx := context.Background()
	if _, err := s.Create(ctx, "/registry/secrets/ns/a", []byte("top secret")); err != nil {
		t.Fatal(err)
	}
	// A second start loads the same key.
	s2, _, err := Open(path, inner, zaptest.NewLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	if kv, err := s2.Get(ctx, "/registry/secrets/ns/a"); err != nil || string(kv.Value) != "top secret" {
		t.Fatalf("after reopen: %+v, %v", kv, err)
	}
	again, _ := os.ReadFile(path)
	if !bytes.Equal(first, again) {
		t.Fatal("reopening changed the config file")
	}
	st, err := m.Status()
	if err != nil || !st.Enabled || st.Provider != ProviderAESCBC || st.ActiveKey != DefaultKeyName || st.ConfigHash != Hash(first) {
		t.Fatalf("Status = %+v, %v", st, err)
	}
}

func TestManagerRotateAndInstall(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, FileName)
	inner := datastore.NewMemStore(0)
	s, m, err := Open(path, inner, zaptest.NewLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Create(ctx, "/registry/secrets/ns/a", []byte("v")); err != nil {
		t.Fatal(err)
	}
	st, err := m.RotateKeys()
	if err != nil || st.ActiveKey == DefaultKeyName || len(st.Keys) != 2 || !st.Keys[0].Active || st.Keys[1].Name != DefaultKeyName {
		t.Fatalf("RotateKeys = %+v, %v", st, err)
	}
	disk, err := m.Status()
	if err != nil || disk.ActiveKey != st.ActiveKey {
		t.Fatalf("file not rewritten: %+v, %v", disk, err)
	}
	res, err := m.Reencrypt(ctx)
	if err != nil || res.Rewritten != 1 {
		t.Fatalf("Reencrypt = %+v, %v", res, err)
	}
	if raw := rawValue(t, inner, "/registry/secrets/ns/a"); !bytes.HasPrefix(raw, []byte("k8s:enc:aescbc:v1:"+st.ActiveKey+":")) {
		t.Fatalf("stored under %q", raw[:40])
	}
	// Ship the config to a second server, as a join does.
	data, err := m.ConfigBytes()
	if err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(dir, "other", FileName)
	if err := InstallFile(other, data); err != nil {
		t.Fatal(err)
	}
	s2, m2, err := Open(other, inner, zaptest.NewLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	if kv, err := s2.Get(ctx, "/registry/secrets/ns/a"); err != nil || string(kv.Value) != "v" {
		t.Fatalf("second server reads %+v, %v", kv, err)
	}
	// A later rotation on the first server, installed in the running second one.
	if _, err := m.RotateKeys(); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Update(ctx, "/registry/secrets/ns/a", []byte("v2"), 0); err != nil {
		t.Fatal(err)
	}
	if _, err := s2.Get(ctx, "/registry/secrets/ns/a"); !errors.Is(err, ErrDecrypt) {
		t.Fatalf("before install: %v, want ErrDecrypt", err)
	}
	data, _ = m.ConfigBytes()
	if err := m2.Install(data); err != nil {
		t.Fatal(err)
	}
	if kv, err := s2.Get(ctx, "/registry/secrets/ns/a"); err != nil || string(kv.Value) != "v2" {
		t.Fatalf("after install: %+v, %v", kv, err)
	}
	if err := m2.Install([]byte("kind: nope")); !errors.Is(err, ErrInvalidConfig) {
		t.Fatalf("Install of a bad config = %v", err)
	}
}

func TestManagerDisabled(t *testing.T) {
	m := NewManager(filepath.Join(t.TempDir(), FileName), nil, nil)
	if st, err := m.Status(); err != nil || st.Enabled || st.ConfigHash != "" {
		t.Fatalf("Status = %+v, %v", st, err)
	}
	if _, err := m.RotateKeys(); !errors.Is(err, ErrDisabled) {
		t.Fatalf("RotateKeys = %v", err)
	}
	if _, err := m.Reencrypt(context.Background()); !errors.Is(err, ErrDisabled) {
		t.Fatalf("Reencrypt = %v", err)
	}
}

func TestRotateIdentityFirst(t *testing.T) {
	c := testConfig([]string{"secrets"}, ProviderAESCBC, Key{Name: "k", Secret: keyB64(32, 'k')})
	p := c.Resources[0].Providers
	p[0], p[1] = p[1], p[0]
	if _, err := Rotate(c, m0()); err == nil {
		t.Fatal("Rotate with identity first succeeded")
	}
}

func TestStatusDescribesTheSecretsEntry(t *testing.T) {
	c := testConfig([]string{"configmaps"}, ProviderAESGCM, Key{Name: "cm", Secret: keyB64(32, 'c')})
	c.Resources = append(c.Resources, testConfig([]string{"secrets"}, ProviderAESCBC, Key{Name: "sec", Secret: keyB64(32, 's')}).Resources[0],
		testConfig([]string{"*."}, ProviderAESCBC, Key{Name: "core", Secret: keyB64(32, 'x')}).Resources[0])
	data, err := c.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	st := describe(c, data, "p")
	if st.Provider != ProviderAESCBC || st.ActiveKey != "sec" || len(st.Keys) != 1 || len(st.Resources) != 3 {
		t.Fatalf("status = %+v", st)
	}
}
