package kubectl

import (
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// testServiceAccounts: `kubectl get sa`, `kubectl create token` and
// `kubectl auth whoami`, as the admin and with the minted token.
func testServiceAccounts(t *testing.T, k *kc) {
	ns := k.newNamespace(t)
	k.ok(t, "-n", ns, "create", "serviceaccount", "robot")
	deadline := time.Now().Add(20 * time.Second)
	for {
		out, _, err := k.run(t, "-n", ns, "get", "sa")
		if err == nil && strings.Contains(out, "default") && strings.Contains(out, "robot") {
			contains(t, "get sa", out, "NAME", "AGE")
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("kubectl get sa never listed default and robot: %q %v", out, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
	contains(t, "whoami", k.ok(t, "auth", "whoami"), "system:masters")
	token := strings.TrimSpace(k.ok(t, "-n", ns, "create", "token", "robot", "--duration", "15m"))
	if strings.Count(token, ".") != 2 {
		t.Fatalf("create token printed %q", token)
	}
	out := k.ok(t, tokenOnly(t, k, token, "auth", "whoami")...)
	contains(t, "whoami with the token", out, "system:serviceaccount:"+ns+":robot", "system:serviceaccounts:"+ns)
	errOut := k.fails(t, "-n", ns, "create", "token", "robot", "--duration", "1m")
	contains(t, "too short a token", errOut, "spec.expirationSeconds")
	errOut = k.fails(t, "-n", ns, "create", "token", "ghost")
	contains(t, "token for a missing sa", errOut, `serviceaccounts "ghost" not found`)
}

// tokenOnly returns kubectl arguments that authenticate with token alone
// (an empty kubeconfig, the server and CA of the admin one).
func tokenOnly(t *testing.T, k *kc, token string, args ...string) []string {
	t.Helper()
	server := k.ok(t, "config", "view", "--raw", "-o", "jsonpath={.clusters[0].cluster.server}")
	caB64 := k.ok(t, "config", "view", "--raw", "-o", "jsonpath={.clusters[0].cluster.certificate-authority-data}")
	ca, err := base64.StdEncoding.DecodeString(strings.TrimSpace(caB64))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	caFile, empty := filepath.Join(dir, "ca.crt"), filepath.Join(dir, "empty.yaml")
	if err := os.WriteFile(caFile, ca, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(empty, []byte("apiVersion: v1\nkind: Config\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return append([]string{"--kubeconfig", empty, "--server", strings.TrimSpace(server),
		"--certificate-authority", caFile, "--token", token}, args...)
}
