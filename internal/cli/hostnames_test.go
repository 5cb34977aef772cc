package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/orch/orch/internal/hostnames"
)

func TestHostNamesCommand(t *testing.T) {
	for _, tc := range []struct {
		args []string
		env  string
		want string
	}{
		{[]string{"orch", "host-names"}, "", hostnames.For("").Shell()},
		{[]string{"orch", "host-names", "--data-dir", "/srv/b"}, "", hostnames.For("/srv/b").Shell()},
		{[]string{"orch", "host-names", "-d", "/srv/b/"}, "", hostnames.For("/srv/b").Shell()},
		{[]string{"orch", "host-names"}, "/srv/c", hostnames.For("/srv/c").Shell()},
	} {
		if tc.env != "" {
			t.Setenv("ORCH_DATA_DIR", tc.env)
		}
		var out bytes.Buffer
		app := NewApp(context.Background())
		app.Writer = &out
		if err := app.Run(tc.args); err != nil {
			t.Fatalf("%v: %v", tc.args, err)
		}
		if out.String() != tc.want {
			t.Errorf("%v: got\n%s\nwant\n%s", tc.args, out.String(), tc.want)
		}
	}
	if !strings.Contains(hostnames.For("/srv/b").Shell(), "ORCH_BRIDGE=orch") {
		t.Error("no bridge line")
	}
}

// TestHostNamesReadsConfigDataDir: the data dir may be set in the
// server's config file, whose other keys host-names skips; the flag and
// the environment still win.
func TestHostNamesReadsConfigDataDir(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(cfg, []byte("data-dir: /srv/cfg\nnode-name: n1\ntls-san: [a]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	run := func(args ...string) string {
		var out bytes.Buffer
		app := NewApp(context.Background())
		app.Writer = &out
		if err := app.Run(append([]string{"orch", "host-names", "--config", cfg}, args...)); err != nil {
			t.Fatalf("%v: %v", args, err)
		}
		return out.String()
	}
	if got, want := run(), hostnames.For("/srv/cfg").Shell(); got != want {
		t.Errorf("from the file: got\n%s\nwant\n%s", got, want)
	}
	if got, want := run("-d", "/srv/flag"), hostnames.For("/srv/flag").Shell(); got != want {
		t.Errorf("flag over file: got\n%s\nwant\n%s", got, want)
	}
}
