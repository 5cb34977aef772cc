package cli

import (
	"bytes"
	"context"
	"runtime"
	"strings"
	"testing"

	ucli "github.com/urfave/cli/v2"

	"github.com/orch/orch/internal/version"
)

func TestVersionOutput(t *testing.T) {
	for _, args := range [][]string{{"orch", "version"}, {"orch", "--version"}, {"orch", "-v"}} {
		t.Run(strings.Join(args[1:], " "), func(t *testing.T) {
			app := NewApp(context.Background())
			var out bytes.Buffer
			app.Writer, app.ErrWriter = &out, &out
			if err := app.Run(args); err != nil {
				t.Fatalf("%v: %v\n%s", args, err, out.String())
			}
			b := version.Get()
			for _, want := range []string{
				"orch version " + b.Version + " ",
				"git commit " + b.GitCommit + "\n",
				"kubernetes version " + version.KubernetesVersion() + "\n",
				"go version " + runtime.Version() + " ",
			} {
				if !strings.Contains(out.String(), want) {
					t.Errorf("%v printed\n%s\nwant it to contain %q", args, out.String(), want)
				}
			}
		})
	}
}

func TestUnknownCommand(t *testing.T) {
	app := NewApp(context.Background())
	var out bytes.Buffer
	app.Writer, app.ErrWriter = &out, &out
	app.ExitErrHandler = func(*ucli.Context, error) {} // no os.Exit
	if err := app.Run([]string{"orch", "no-such-command"}); err == nil || !strings.Contains(err.Error(), "no-such-command") {
		t.Errorf("unknown command: err = %v, want one naming it", err)
	}
}
