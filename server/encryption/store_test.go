package encryption

import (
	"bytes"
	"context"
	"errors"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"

	"github.com/orch/orch/datastore"
	"github.com/orch/orch/datastore/storetest"
)

// everything is a config whose rule covers every key the conformance
// suite uses (they are not under /registry/).
func everything(t *testing.T, inner datastore.Store) *Store {
	t.Helper()
	s, err := NewStore(inner, testConfig([]string{"secrets"}, ProviderAESGCM, Key{Name: "k", Secret: keyB64(32, 'e')}), zaptest.NewLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	tr := s.t.Load()
	tr.rules[0].matchers = []matcher{{prefix: "/"}}
	return s
}

// TestStoreConformance runs the datastore contract over the wrapper with
// every value encrypted.
func TestStoreConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) datastore.Store {
		return everything(t, datastore.NewMemStore(storetest.HistorySize))
	})
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func newSecretsStore(t *testing.T) (*Store, *datastore.MemStore) {
	t.Helper()
	inner := datastore.NewMemStore(0)
	s, err := NewStore(inner, testConfig([]string{"secrets"}, ProviderAESCBC, Key{Name: "k1", Secret: keyB64(32, '1')}), zaptest.NewLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	return s, inner
}

func rawValue(t *testing.T, inner datastore.Store, key string) []byte {
	t.Helper()
	kv, err := inner.Get(context.Background(), key)
	if err != nil {
		t.Fatal(err)
	}
	return kv.Value
}

func TestStoreEncryptsConfiguredResources(t *testing.T) {
	ctx := ctxT(t)
	s, inner := newSecretsStore(t)
	w, err := s.Watch(ctx, "/registry/", 0)
	if err != nil {
		t.Fatal(err)
	}
	sec, cm := "/registry/secrets/ns/a", "/registry/configmaps/ns/a"
	rev, err := s.Create(ctx, sec, []byte("password=hunter2"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Txn(ctx, []datastore.Op{{Type: datastore.OpCreate, Key: cm, Value: []byte("plain config")},
		{Type: datastore.OpUpdate, Key: sec, Value: []byte("password=hunter3"), ExpectedRev: rev}}); err != nil {
		t.Fatal(err)
	}
	if raw := rawValue(t, inner, sec); !bytes.HasPrefix(raw, []byte("k8s:enc:aescbc:v1:k1:")) || bytes.Contains(raw, []byte("hunter")) {
		t.Fatalf("secret stored as %q", raw)
	}
	if raw := rawValue(t, inner, cm); string(raw) != "plain config" {
		t.Fatalf("configmap stored as %q", raw)
	}
	kv, err := s.Get(ctx, sec)
	if err != nil || string(kv.Value) != "password=hunter3" {
		t.Fatalf("Get = %+v, %v", kv, err)
	}
	list, err := s.List(ctx, "/registry/", "", 0)
	if err != nil || len(list.KVs) != 2 || string(list.KVs[1].Value) != "password=hunter3" {
		t.Fatalf("List = %+v, %v", list, err)
	}
	old, err := s.ListAt(ctx, "/registry/secrets/", "", 0, rev)
	if err != nil || len(old.KVs) != 1 || string(old.KVs[0].Value) != "password=hunter2" {
		t.Fatalf("ListAt = %+v, %v", old, err)
	}
	_, prev, err := s.Delete(ctx, sec, 0)
	if err != nil || string(prev.Value) != "password=hunter3" {
		t.Fatalf("Delete prev = %+v, %v", prev, err)
	}
	want := []string{"password=hunter2", "plain config", "password=hunter3", "password=hunter3"}
	for i, wv := range want {
		select {
		case ev := <-w:
			if string(ev.KV.Value) != wv {
				t.Fatalf("event %d value %q, want %q", i, ev.KV.Value, wv)
			}
			if ev.PrevKV != nil && bytes.HasPrefix(ev.PrevKV.Value, []byte(EncryptedPrefix)) {
				t.Fatalf("event %d PrevKV not decrypted", i)
			}
		case <-ctx.Done():
			t.Fatal("no watch event")
		}
	}
	if _, err := s.Get(ctx, sec); !errors.Is(err, datastore.ErrNotFound) {
		t.Fatalf("Get after delete: %v", err)
	}
}

func TestStoreUndecryptable(t *testing.T) {
	ctx := ctxT(t)
	s, inner := newSecretsStore(t)
	key := "/registry/secrets/ns/bad"
	if _, err := inner.Create(ctx, key, []byte("k8s:enc:aescbc:v1:lost:0123456789abcdef0123456789abcdef")); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get(ctx, key); !errors.Is(err, ErrDecrypt) {
		t.Fatalf("Get = %v, want ErrDecrypt", err)
	}
	if _, err := s.List(ctx, "/registry/secrets/", "", 0); !errors.Is(err, ErrDecrypt) {
		t.Fatalf("List = %v, want ErrDecrypt", err)
	}
	w, err := s.Watch(ctx, "/registry/secrets/", 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := inner.Update(ctx, key, []byte("k8s:enc:aescbc:v1:lost:0123456789abcdef0123456789abcdef"), 0); err != nil {
		t.Fatal(err)
	}
	select {
	case ev, ok := <-w:
		if ok {
			t.Fatalf("got event %+v, want the watch closed", ev)
		}
	case <-ctx.Done():
		t.Fatal("watch not closed")
	}
}

func TestReencrypt(t *testing.T) {
	ctx := ctxT(t)
	inner := datastore.NewMemStore(0)
	// Values written before encryption was turned on.
	if _, err := inner.Create(ctx, "/registry/secrets/ns/plain", []byte("before")); err != nil {
		t.Fatal(err)
	}
	if _, err := inner.Create(ctx, "/registry/configmaps/ns/c", []byte("cm")); err != nil {
		t.Fatal(err)
	}
	c1 := testConfig([]string{"secrets"}, ProviderAESCBC, Key{Name: "k1", Secret: keyB64(32, '1')})
	s, err := NewStore(inner, c1, zaptest.NewLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Create(ctx, "/registry/secrets/ns/enc", []byte("after")); err != nil {
		t.Fatal(err)
	}
	res, err := s.Reencrypt(ctx)
	if err != nil || res != (ReencryptResult{Scanned: 2, Rewritten: 1}) {
		t.Fatalf("Reencrypt = %+v, %v; want the plaintext secret rewritten", res, err)
	}
	c2, err := Rotate(c1, time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.SetConfig(c2); err != nil {
		t.Fatal(err)
	}
	newPrefix := []byte("k8s:enc:aescbc:v1:aescbckey-20260102T030405Z:")
	for key, want := range map[string]string{"/registry/secrets/ns/plain": "before", "/registry/secrets/ns/enc": "after"} {
		if kv, err := s.Get(ctx, key); err != nil || string(kv.Value) != want {
			t.Fatalf("after rotate, Get %s = %v, %v", key, kv, err)
		}
	}
	res, err = s.Reencrypt(ctx)
	if err != nil || res != (ReencryptResult{Scanned: 2, Rewritten: 2}) {
		t.Fatalf("Reencrypt after rotate = %+v, %v", res, err)
	}
	for _, key := range []string{"/registry/secrets/ns/plain", "/registry/secrets/ns/enc"} {
		if raw := rawValue(t, inner, key); !bytes.HasPrefix(raw, newPrefix) {
			t.Fatalf("%s stored as %q after reencrypt", key, raw[:min(len(raw), 48)])
		}
	}
	if string(rawValue(t, inner, "/registry/configmaps/ns/c")) != "cm" {
		t.Fatal("a configmap was rewritten")
	}
	if res, err = s.Reencrypt(ctx); err != nil || res.Rewritten != 0 {
		t.Fatalf("second Reencrypt = %+v, %v; want nothing rewritten", res, err)
	}
}

func TestReencryptConflict(t *testing.T) {
	ctx := ctxT(t)
	inner := datastore.NewMemStore(0)
	c1 := testConfig([]string{"secrets"}, ProviderAESCBC, Key{Name: "k1", Secret: keyB64(32, '1')})
	s, err := NewStore(inner, c1, zaptest.NewLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	key := "/registry/secrets/ns/x"
	rev, err := inner.Create(ctx, key, []byte("v1"))
	if err != nil {
		t.Fatal(err)
	}
	// A client write lands between Reencrypt's read and its CAS: the CAS
	// fails, the key is read again and the newer value is kept.
	if _, err := s.Update(ctx, key, []byte("v2"), rev); err != nil {
		t.Fatal(err)
	}
	done, err := s.reencryptKey(ctx, datastore.KV{Key: key, Value: []byte("v1"), ModRevision: rev})
	if err != nil || done {
		t.Fatalf("reencryptKey = %v, %v; want no write (the newer value is current)", done, err)
	}
	if kv, err := s.Get(ctx, key); err != nil || string(kv.Value) != "v2" {
		t.Fatalf("Get = %+v, %v; want the client's write", kv, err)
	}
}

func TestAddPrefix(t *testing.T) {
	var l []string
	for _, p := range []string{"/registry/secrets/", "/registry/apps/", "/registry/", "/registry/configmaps/"} {
		l = addPrefix(l, p)
	}
	if len(l) != 1 || l[0] != "/registry/" {
		t.Fatalf("prefixes = %v", l)
	}
}
