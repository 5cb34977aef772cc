package pki

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"k8s.io/client-go/tools/clientcmd"
)

// Not parallel: it changes the process umask to prove it does not matter.
func TestWriteKubeconfig(t *testing.T) {
	b := mustLoad(t, t.TempDir(), testOpts(t))
	old := syscall.Umask(0o077)
	t.Cleanup(func() { syscall.Umask(old) })
	tests := []struct {
		name string
		mode os.FileMode
		want os.FileMode
	}{
		{"default", 0, 0o600},
		{"explicit 0644", 0o644, 0o644},
		{"explicit 0600", 0o600, 0o600},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "etc", "orch", "orch.yaml")
			for range 2 { // the second write replaces the first
				if err := WriteKubeconfig(path, tt.mode, "https://127.0.0.1:6443", b.CAPEM(), b.AdminCertPEM(), b.AdminKeyPEM()); err != nil {
					t.Fatal(err)
				}
			}
			st, err := os.Stat(path)
			if err != nil {
				t.Fatal(err)
			}
			if st.Mode().Perm() != tt.want {
				t.Errorf("mode %o, want %o", st.Mode().Perm(), tt.want)
			}
			dst, err := os.Stat(filepath.Dir(path))
			if err != nil || dst.Mode().Perm() != 0o700 {
				t.Errorf("parent dir: %v, %v", dst, err)
			}
			entries, _ := os.ReadDir(filepath.Dir(path))
			if len(entries) != 1 {
				t.Errorf("temporary files left: %v", entries)
			}
			cfg, err := clientcmd.LoadFromFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if cfg.CurrentContext != "default" || cfg.Contexts["default"].Cluster != "default" || cfg.Contexts["default"].AuthInfo != "default" {
				t.Errorf("context: %+v", cfg.Contexts)
			}
			if cfg.Clusters["default"].Server != "https://127.0.0.1:6443" || string(cfg.Clusters["default"].CertificateAuthorityData) != string(b.CAPEM()) {
				t.Error("cluster entry differs")
			}
			if string(cfg.AuthInfos["default"].ClientKeyData) != string(b.AdminKeyPEM()) {
				t.Error("client key differs")
			}
			rc, err := clientcmd.NewDefaultClientConfig(*cfg, nil).ClientConfig()
			if err != nil || rc.Host != "https://127.0.0.1:6443" {
				t.Errorf("rest config: %v, %v", rc, err)
			}
		})
	}
}
