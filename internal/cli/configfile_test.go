package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	ucli "github.com/urfave/cli/v2"

	"github.com/orch/orch/server"
)

// runServerFlags parses args like `orch server` does (flags, ORCH_* env,
// config file) and returns the resulting server.Config without running it.
func runServerFlags(t *testing.T, args ...string) (server.Config, error) {
	t.Helper()
	var got server.Config
	app := &ucli.App{Name: "orch", Commands: []*ucli.Command{{
		Name:   "server",
		Flags:  serverFlags(),
		Before: func(c *ucli.Context) error { return applyConfigFile(c, DefaultConfigPath) },
		Action: func(c *ucli.Context) (err error) {
			got, err = serverConfig(c)
			return err
		},
	}}}
	err := app.Run(append([]string{"orch", "server"}, args...))
	return got, err
}

func writeFile(t *testing.T, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestConfigFilePrecedence(t *testing.T) {
	cfgFile := writeFile(t, "# orch\ndata-dir: /from/file\nhttps-listen-port: 7443\ntls-san:\n  - a.example\n  - 10.0.0.9\ncluster-domain: file.local\n")
	t.Setenv("ORCH_CLUSTER_DOMAIN", "env.local")
	got, err := runServerFlags(t, "--config", cfgFile, "--data-dir", "/from/flag")
	if err != nil {
		t.Fatal(err)
	}
	if got.DataDir != "/from/flag" {
		t.Errorf("data-dir = %q, want the command line to win", got.DataDir)
	}
	if got.ClusterDomain != "env.local" {
		t.Errorf("cluster-domain = %q, want the environment to win over the file", got.ClusterDomain)
	}
	if got.HTTPSListenPort != 7443 || strings.Join(got.TLSSANs, ",") != "a.example,10.0.0.9" {
		t.Errorf("from file: port %d, tls-san %v", got.HTTPSListenPort, got.TLSSANs)
	}
	if got.WriteKubeconfigMode != 0o600 || got.RaftPort != 6444 {
		t.Errorf("defaults: mode %o raft-port %d", got.WriteKubeconfigMode, got.RaftPort)
	}
}

func TestConfigFileErrors(t *testing.T) {
	tests := []struct {
		name, content, want string
		missing             bool
	}{
		{name: "unknown key", content: "data-dri: /x\n", want: `unknown key "data-dri"`},
		{name: "wrong type", content: "https-listen-port: [1, 2]\n", want: `key "https-listen-port"`},
		{name: "map value", content: "data-dir: {a: b}\n", want: `key "data-dir"`},
		{name: "not yaml", content: "data-dir: [\n", want: "config file"},
		{name: "explicit file missing", missing: true, want: "reading config file"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "absent.yaml")
			if !tc.missing {
				p = writeFile(t, tc.content)
			}
			_, err := runServerFlags(t, "--config", p)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want it to mention %q", err, tc.want)
			}
		})
	}
}

func TestBadKubeconfigMode(t *testing.T) {
	if _, err := runServerFlags(t, "--config", writeFile(t, ""), "--write-kubeconfig-mode", "rw"); err == nil ||
		!strings.Contains(err.Error(), "--write-kubeconfig-mode") {
		t.Fatalf("err = %v", err)
	}
}
