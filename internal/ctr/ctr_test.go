package ctr

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	ucli "github.com/urfave/cli/v2"
)

// probe replaces ctr's commands with one that records the global flags.
func probe(t *testing.T, app *ucli.App) *[2]string {
	t.Helper()
	var got [2]string
	app.Commands = []*ucli.Command{{Name: "probe", Action: func(c *ucli.Context) error {
		got = [2]string{c.String("address"), c.String("namespace")}
		return nil
	}}}
	return &got
}

func TestDefaults(t *testing.T) {
	const addr, ns = "/run/orch-test/containerd.sock", "orch-test"
	cases := []struct {
		name     string
		env      map[string]string
		args     []string
		wantAddr string
		wantNS   string
	}{
		{"orch defaults", nil, nil, addr, ns},
		{"--address wins", nil, []string{"--address", "/x.sock"}, "/x.sock", ns},
		{"-a wins", nil, []string{"-a", "/x.sock"}, "/x.sock", ns},
		{"--namespace wins", nil, []string{"--namespace", "k8s.io"}, addr, "k8s.io"},
		{"-n= wins", nil, []string{"-n=other"}, addr, "other"},
		{"CONTAINERD_ADDRESS wins", map[string]string{"CONTAINERD_ADDRESS": "/env.sock"}, nil, "/env.sock", ns},
		{"CONTAINERD_NAMESPACE wins", map[string]string{"CONTAINERD_NAMESPACE": "envns"}, nil, addr, "envns"},
		{"flag beats env", map[string]string{"CONTAINERD_NAMESPACE": "envns"}, []string{"-n", "flagns"}, addr, "flagns"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("CONTAINERD_ADDRESS", "")
			t.Setenv("CONTAINERD_NAMESPACE", "")
			os.Unsetenv("CONTAINERD_ADDRESS")
			os.Unsetenv("CONTAINERD_NAMESPACE")
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			app, err := NewApp(addr, ns)
			if err != nil {
				t.Fatal(err)
			}
			got := probe(t, app)
			args := append(append([]string{"ctr"}, tc.args...), "probe")
			if err := app.Run(args); err != nil {
				t.Fatalf("run %q: %v", args, err)
			}
			if got[0] != tc.wantAddr || got[1] != tc.wantNS {
				t.Fatalf("args %q env %v: address %q namespace %q, want %q %q",
					tc.args, tc.env, got[0], got[1], tc.wantAddr, tc.wantNS)
			}
		})
	}
}

// TestUpstreamCommands: the app is upstream ctr's, with its subcommands.
func TestUpstreamCommands(t *testing.T) {
	app, err := NewApp(DefaultAddress, DefaultNamespace)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"containers", "tasks", "images", "namespaces", "snapshots", "content"} {
		if app.Command(name) == nil {
			t.Errorf("ctr has no %q command", name)
		}
	}
	if DefaultAddress != "/run/orch/containerd/containerd.sock" || DefaultNamespace != "orch" {
		t.Errorf("defaults %q %q", DefaultAddress, DefaultNamespace)
	}
}

func TestSetDefaultUnknownFlag(t *testing.T) {
	err := setDefault(&ucli.App{Flags: []ucli.Flag{&ucli.BoolFlag{Name: "address"}}}, "address", "x")
	if err == nil || !strings.Contains(err.Error(), "--address") {
		t.Fatalf("setDefault on an app without a string --address: %v", err)
	}
}

// TestRunMissingSocket: a socket that is not there is a clear error naming
// it, not a hang.
func TestRunMissingSocket(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "none.sock")
	err := Run([]string{"ctr", "--address", sock, "containers", "ls"})
	if err == nil || !strings.Contains(err.Error(), sock) {
		t.Fatalf("Run against %s: %v", sock, err)
	}
}
