package encryption

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"

	"github.com/orch/orch/datastore"
	"github.com/orch/orch/internal/pki"
)

// TestRaftFilesHoldNoPlaintext writes Secrets through the wrapper into a
// real Raft store that snapshots after every few entries, and greps every
// file under its directory (raft.db, state.db, snapshots/) for the values
// and their base64: only ciphertext may be there. The same writes without
// the wrapper are found, which proves the grep works.
func TestRaftFilesHoldNoPlaintext(t *testing.T) {
	for _, encrypted := range []bool{true, false} {
		t.Run(fmt.Sprintf("encrypted=%v", encrypted), func(t *testing.T) {
			dir := t.TempDir()
			secret := fmt.Sprintf("plaintext-%d-%v", time.Now().UnixNano(), encrypted)
			st := openRaft(t, dir)
			var store datastore.Store = st
			if encrypted {
				s, err := NewStore(st, testConfig([]string{"secrets"}, ProviderAESCBC, Key{Name: "k", Secret: keyB64(32, 'r')}), zaptest.NewLogger(t))
				if err != nil {
					t.Fatal(err)
				}
				store = s
			}
			ctx := ctxT(t)
			val := fmt.Sprintf(`{"kind":"Secret","stringData":{"v":%q},"data":{"v":%q}}`, secret, base64.StdEncoding.EncodeToString([]byte(secret)))
			for i := range 20 {
				if _, err := store.Create(ctx, fmt.Sprintf("/registry/secrets/ns/s%d", i), []byte(val)); err != nil {
					t.Fatal(err)
				}
			}
			waitSnapshot(t, dir)
			if kv, err := store.Get(ctx, "/registry/secrets/ns/s3"); err != nil || string(kv.Value) != val {
				t.Fatalf("Get = %v, %v", kv, err)
			}
			if err := st.Close(); err != nil {
				t.Fatal(err)
			}
			found := grepDir(t, dir, secret, base64.StdEncoding.EncodeToString([]byte(secret)))
			if encrypted && len(found) > 0 {
				t.Fatalf("plaintext found in %v", found)
			}
			if !encrypted && len(found) == 0 {
				t.Fatal("the grep found nothing without encryption: it proves nothing")
			}
		})
	}
}

func openRaft(t *testing.T, dir string) *datastore.RaftStore {
	t.Helper()
	bundle, err := pki.LoadOrCreate(filepath.Join(dir, "tls"), pki.Options{AdvertiseAddress: "127.0.0.1"})
	if err != nil {
		t.Fatal(err)
	}
	st, err := datastore.Open(context.Background(), datastore.Config{
		Dir: filepath.Join(dir, "db"), NodeID: "n1", BindAddr: "127.0.0.1:0",
		ServerTLS: bundle.PeerServerTLS(), ClientTLS: bundle.PeerClientTLS(), Bootstrap: true,
		SnapshotThreshold: 4, TrailingLogs: 1, SnapshotInterval: 50 * time.Millisecond,
		Logger: zaptest.NewLogger(t),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	if err := st.WaitLeader(context.Background()); err != nil {
		t.Fatal(err)
	}
	return st
}

func waitSnapshot(t *testing.T, dir string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		m, _ := filepath.Glob(filepath.Join(dir, "db", "snapshots", "*", "state.bin"))
		if len(m) > 0 {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatal("no raft snapshot was taken")
}

// grepDir returns the files under dir (but not its tls/) holding any needle.
func grepDir(t *testing.T, dir string, needles ...string) []string {
	t.Helper()
	var found []string
	err := filepath.WalkDir(filepath.Join(dir, "db"), func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, n := range needles {
			if bytes.Contains(data, []byte(n)) {
				found = append(found, path+" ("+n+")")
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return found
}
