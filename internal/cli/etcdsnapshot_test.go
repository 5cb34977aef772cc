package cli

import (
	"bytes"
	"context"
	"strings"
	"testing"

	ucli "github.com/urfave/cli/v2"

	"github.com/orch/orch/server/snapshots"
)

func TestSnapshotServerFlags(t *testing.T) {
	var got snapshots.Config
	app := &ucli.App{Commands: []*ucli.Command{{Name: "server", Flags: snapshotServerFlags(),
		Action: func(c *ucli.Context) error { got = snapshotServerConfig(c); return nil }}}}
	if err := app.Run([]string{"orch", "server"}); err != nil {
		t.Fatal(err)
	}
	want := snapshots.Config{ScheduleCron: snapshots.DefaultCron, Retention: snapshots.DefaultRetention}
	if got != want {
		t.Fatalf("defaults %+v, want %+v", got, want)
	}
	err := app.Run([]string{"orch", "server", "--etcd-snapshot-schedule-cron", "@daily", "--etcd-snapshot-retention", "9",
		"--etcd-snapshot-dir", "/s", "--etcd-disable-snapshots", "--cluster-reset", "--cluster-reset-restore-path", "/s/x"})
	if err != nil {
		t.Fatal(err)
	}
	want = snapshots.Config{Dir: "/s", ScheduleCron: "@daily", Retention: 9, Disable: true, ClusterReset: true, RestorePath: "/s/x"}
	if got != want {
		t.Fatalf("flags %+v, want %+v", got, want)
	}
}

// TestEtcdSnapshotCommandsOnEmptyDir runs ls, prune and delete of the
// command line against an empty snapshot directory.
func TestEtcdSnapshotCommandsOnEmptyDir(t *testing.T) {
	dir := t.TempDir()
	run := func(args ...string) (string, error) {
		app := NewApp(context.Background())
		var out bytes.Buffer
		app.Writer, app.ErrWriter = &out, &out
		err := app.Run(append([]string{"orch"}, args...))
		return out.String(), err
	}
	if out, err := run("etcd-snapshot", "ls", "--dir", dir, "-o", "json"); err != nil || strings.TrimSpace(out) != "[]" {
		t.Fatalf("ls -o json = %q, %v", out, err)
	}
	if out, err := run("snapshot", "list", "--etcd-snapshot-dir", dir); err != nil || strings.TrimSpace(out) != "Name  Location  Size  Created" {
		t.Fatalf("ls = %q, %v", out, err)
	}
	if _, err := run("snapshot", "ls", "--dir", dir, "-o", "yaml"); err == nil {
		t.Fatal("ls -o yaml accepted")
	}
	if out, err := run("snapshot", "prune", "--dir", dir, "--snapshot-retention", "1"); err != nil || out != "" {
		t.Fatalf("prune = %q, %v", out, err)
	}
	if _, err := run("snapshot", "prune", "--dir", dir, "--snapshot-retention", "0"); err == nil {
		t.Fatal("prune --snapshot-retention 0 accepted")
	}
	if _, err := run("snapshot", "delete", "--dir", dir); err == nil {
		t.Fatal("delete without names accepted")
	}
	if _, err := run("snapshot", "delete", "--dir", dir, "nope"); err == nil {
		t.Fatal("delete of a missing snapshot accepted")
	}
	if _, err := run("snapshot", "save", "--data-dir", dir); err == nil || !strings.Contains(err.Error(), "cluster CA") {
		t.Fatalf("save without a server's TLS dir: %v", err)
	}
}
