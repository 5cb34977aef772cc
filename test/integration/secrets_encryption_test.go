package integration

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/orch/orch/test/testutil"
)

// TestSecretsEncryptionAtRest runs `orch server --secrets-encryption`,
// stores a Secret through client-go, reads it back across a restart, rotates
// the key and re-encrypts with `orch secrets-encrypt`, then stops the server
// and greps every file of its datastore (raft.db, state.db, snapshots/) for
// the value and its base64: neither may be there, and the Secret must be
// stored under the new key.
func TestSecretsEncryptionAtRest(t *testing.T) {
	t.Parallel()
	s := testutil.StartServer(t, testutil.Options{Quiet: true, ExtraArgs: []string{"--secrets-encryption"}})
	cfgPath := filepath.Join(s.DataDir, "server", "cred", "encryption-config.json")
	if fi, err := os.Stat(cfgPath); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("encryption config %s: %v (mode %v), want mode 0600", cfgPath, err, fi)
	}
	value, name := fmt.Sprintf("ATREST-%016x", rand.Uint64()), "db"
	createSecret(t, s, name, value)
	checkSecret(t, s, name, value)
	s.Restart()
	checkSecret(t, s, name, value)

	out := secretsEncrypt(t, s, "status")
	if !strings.Contains(out, "Encryption Status: Enabled") || !strings.Contains(out, "aescbckey") {
		t.Fatalf("status:\n%s", out)
	}
	out = secretsEncrypt(t, s, "rotate-keys")
	newKey := strings.Fields(strings.TrimPrefix(out, "new active key "))[0]
	if !strings.HasPrefix(newKey, "aescbckey-") {
		t.Fatalf("rotate-keys:\n%s", out)
	}
	checkSecret(t, s, name, value) // the old key still decrypts
	out = secretsEncrypt(t, s, "reencrypt")
	if !strings.Contains(out, "reencrypted:") || strings.Contains(out, " 0 of ") {
		t.Fatalf("reencrypt:\n%s", out)
	}
	out = secretsEncrypt(t, s, "status")
	if !activeKeyLine(out, newKey) {
		t.Fatalf("status after rotate-keys, want %s active:\n%s", newKey, out)
	}
	checkSecret(t, s, name, value)
	s.Restart() // the rotated config is loaded from the file
	checkSecret(t, s, name, value)
	if err := s.Stop(); err != nil {
		t.Logf("stop: %v", err)
	}

	db := filepath.Join(s.DataDir, "server", "db")
	if found := grepFiles(t, db, value, base64.StdEncoding.EncodeToString([]byte(value))); len(found) > 0 {
		t.Fatalf("the Secret's value is stored in plaintext in %v", found)
	}
	stored := storedValue(t, filepath.Join(db, "state.db"), "/registry/secrets/default/"+name)
	if want := []byte("k8s:enc:aescbc:v1:" + newKey + ":"); !bytes.Contains(stored, want) {
		t.Fatalf("state.db holds %q…, want the prefix %s", stored[:min(len(stored), 60)], want)
	}
}

// TestSecretsPlaintextWithoutEncryption is the control of
// TestSecretsEncryptionAtRest: without --secrets-encryption the same grep
// finds the value, so an empty grep above means something.
func TestSecretsPlaintextWithoutEncryption(t *testing.T) {
	t.Parallel()
	s := testutil.StartServer(t, testutil.Options{Quiet: true})
	value := fmt.Sprintf("ATREST-%016x", rand.Uint64())
	createSecret(t, s, "db", value)
	out := secretsEncrypt(t, s, "status")
	if !strings.Contains(out, "Disabled") {
		t.Fatalf("status without --secrets-encryption:\n%s", out)
	}
	if err := s.Stop(); err != nil {
		t.Logf("stop: %v", err)
	}
	if _, err := os.Stat(filepath.Join(s.DataDir, "server", "cred", "encryption-config.json")); err == nil {
		t.Fatal("an encryption config was written without --secrets-encryption")
	}
	found := grepFiles(t, filepath.Join(s.DataDir, "server", "db"), value, base64.StdEncoding.EncodeToString([]byte(value)))
	if len(found) == 0 {
		t.Fatal("the grep does not find an unencrypted Secret value: it would prove nothing")
	}
}

func createSecret(t *testing.T, s *testutil.Server, name, value string) {
	t.Helper()
	sec := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name}, Data: map[string][]byte{"password": []byte(value)},
		StringData: map[string]string{"also": value}}
	_, err := s.Clientset.CoreV1().Secrets("default").Create(ctxT(t), sec, metav1.CreateOptions{})
	must(t, err, "create secret")
}

func checkSecret(t *testing.T, s *testutil.Server, name, value string) {
	t.Helper()
	got, err := s.Clientset.CoreV1().Secrets("default").Get(ctxT(t), name, metav1.GetOptions{})
	must(t, err, "get secret")
	if string(got.Data["password"]) != value || string(got.Data["also"]) != value {
		t.Fatalf("secret data %v, want both keys = %s", got.Data, value)
	}
}

// secretsEncrypt runs `orch secrets-encrypt <sub>` against s and returns its output.
func secretsEncrypt(t *testing.T, s *testutil.Server, sub string) string {
	t.Helper()
	cmd := exec.CommandContext(ctxT(t), testutil.Binary(t), "secrets-encrypt", sub,
		"--data-dir", s.DataDir, "--server", fmt.Sprintf("https://127.0.0.1:%d", s.HTTPSPort))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("orch secrets-encrypt %s: %v\n%s", sub, err, out)
	}
	return string(out)
}

// activeKeyLine reports whether status output marks key active ("*").
func activeKeyLine(out, key string) bool {
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if len(f) == 3 && f[0] == "*" && f[2] == key {
			return true
		}
	}
	return false
}

// grepFiles returns the files under dir that contain any needle.
func grepFiles(t *testing.T, dir string, needles ...string) []string {
	t.Helper()
	var found []string
	n := 0
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		n++
		for _, needle := range needles {
			if bytes.Contains(data, []byte(needle)) {
				found = append(found, fmt.Sprintf("%s (%s)", path, needle))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n < 2 {
		t.Fatalf("only %d files under %s: the datastore layout changed", n, dir)
	}
	return found
}

// storedValue reads one key's raw record from the FSM's bbolt file.
func storedValue(t *testing.T, path, key string) []byte {
	t.Helper()
	db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true, Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = db.Close() }()
	var v []byte
	err = db.View(func(tx *bolt.Tx) error {
		b := tx.Bucket([]byte("kv"))
		if b == nil {
			return fmt.Errorf("%s has no kv bucket", path)
		}
		v = bytes.Clone(b.Get([]byte(key)))
		return nil
	})
	if err != nil || v == nil {
		t.Fatalf("reading %s from %s: %v (found %v)", key, path, err, v != nil)
	}
	return v
}
