package cli

import (
	"bytes"
	"context"
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
