package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"text/tabwriter"
	"time"

	ucli "github.com/urfave/cli/v2"

	"github.com/orch/orch/server/snapshots"
)

// snapshotServerFlags are `orch server`'s snapshot and cluster-reset flags
// (k3s's names).
func snapshotServerFlags() []ucli.Flag {
	return []ucli.Flag{
		&ucli.StringFlag{Name: "etcd-snapshot-schedule-cron", Value: snapshots.DefaultCron, EnvVars: envVars("etcd-snapshot-schedule-cron"),
			Usage: "when to save automatic datastore snapshots (5-field cron, local time)"},
		&ucli.IntFlag{Name: "etcd-snapshot-retention", Value: snapshots.DefaultRetention, EnvVars: envVars("etcd-snapshot-retention"),
			Usage: "how many automatic snapshots to keep"},
		snapshotDirFlag(),
		&ucli.BoolFlag{Name: "etcd-disable-snapshots", EnvVars: envVars("etcd-disable-snapshots"), Usage: "do not save automatic snapshots"},
		&ucli.BoolFlag{Name: "cluster-reset", EnvVars: envVars("cluster-reset"),
			Usage: "make this server the only member of its datastore cluster (after quorum is lost for good), then exit"},
		&ucli.StringFlag{Name: "cluster-reset-restore-path", EnvVars: envVars("cluster-reset-restore-path"),
			Usage: "with --cluster-reset: restore the datastore from this snapshot file first"},
	}
}

func snapshotDirFlag() ucli.Flag {
	return &ucli.StringFlag{Name: "etcd-snapshot-dir", EnvVars: envVars("etcd-snapshot-dir"),
		Usage: "directory of datastore snapshots (default: <data-dir>/server/db/etcd-snapshots)"}
}

func snapshotServerConfig(c *ucli.Context) snapshots.Config {
	return snapshots.Config{
		Dir:          c.String("etcd-snapshot-dir"),
		ScheduleCron: c.String("etcd-snapshot-schedule-cron"),
		Retention:    c.Int("etcd-snapshot-retention"),
		Disable:      c.Bool("etcd-disable-snapshots"),
		ClusterReset: c.Bool("cluster-reset"),
		RestorePath:  c.String("cluster-reset-restore-path"),
	}
}

// etcdSnapshotCommand is `orch etcd-snapshot` (alias `orch snapshot`).
func etcdSnapshotCommand() *ucli.Command {
	return &ucli.Command{
		Name:    "etcd-snapshot",
		Aliases: []string{"snapshot"},
		Usage:   "save, list, delete and prune datastore snapshots",
		Subcommands: []*ucli.Command{
			{Name: "save", Usage: "save a snapshot through the running server", Action: snapshotSave,
				Flags: append(snapshotCommonFlags(), snapshotNameFlag(),
					&ucli.StringFlag{Name: "server", Aliases: []string{"s"}, Value: "https://127.0.0.1:6443",
						Usage: "the server to ask (authenticated with <data-dir>/server/tls/admin.crt)"})},
			{Name: "ls", Aliases: []string{"list", "l"}, Usage: "list snapshots", Action: snapshotList,
				Flags: append(snapshotCommonFlags(), &ucli.StringFlag{Name: "output", Aliases: []string{"o"}, Value: "table", Usage: "table or json"})},
			{Name: "delete", Aliases: []string{"rm"}, Usage: "delete the named snapshots", ArgsUsage: "NAME...",
				Flags: snapshotCommonFlags(), Action: snapshotDelete},
			{Name: "prune", Usage: "delete the oldest snapshots named --name beyond --snapshot-retention", Action: snapshotPrune,
				Flags: append(snapshotCommonFlags(), snapshotNameFlag(),
					&ucli.IntFlag{Name: "snapshot-retention", Value: snapshots.DefaultRetention, Usage: "how many snapshots to keep"})},
		},
	}
}

func snapshotCommonFlags() []ucli.Flag {
	dir := snapshotDirFlag().(*ucli.StringFlag)
	dir.Aliases = []string{"dir"} // k3s's etcd-snapshot accepts both
	return []ucli.Flag{
		&ucli.StringFlag{Name: "data-dir", Aliases: []string{"d"}, Value: "/var/lib/orch", EnvVars: envVars("data-dir"), Usage: "the server's data dir"},
		dir,
	}
}

func snapshotNameFlag() ucli.Flag {
	return &ucli.StringFlag{Name: "name", Value: snapshots.OnDemandName, Usage: "snapshot name prefix (<name>-<node>-<unixtime>)"}
}

func snapshotDirOf(c *ucli.Context) string {
	if d := c.String("etcd-snapshot-dir"); d != "" {
		return d
	}
	return snapshots.DefaultDir(c.String("data-dir"))
}

func snapshotSave(c *ucli.Context) error {
	client, err := snapshots.NewClient(c.String("server"), filepath.Join(c.String("data-dir"), "server", "tls"))
	if err != nil {
		return err
	}
	dir := c.String("etcd-snapshot-dir")
	if dir != "" {
		if dir, err = filepath.Abs(dir); err != nil {
			return err
		}
	}
	info, err := client.Save(c.Context, snapshots.SaveRequest{Name: c.String("name"), Dir: dir})
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(c.App.Writer, "Snapshot %s saved at revision %d: %s (%d bytes)\n", info.Name, info.Revision, info.Location, info.Size)
	return err
}

func snapshotList(c *ucli.Context) error {
	list, err := snapshots.List(snapshotDirOf(c))
	if err != nil {
		return err
	}
	switch c.String("output") {
	case "json":
		if list == nil {
			list = []snapshots.Info{}
		}
		enc := json.NewEncoder(c.App.Writer)
		enc.SetIndent("", "  ")
		return enc.Encode(list)
	case "table", "":
		w := tabwriter.NewWriter(c.App.Writer, 0, 8, 2, ' ', 0)
		fmt.Fprintln(w, "Name\tLocation\tSize\tCreated")
		for _, i := range list {
			fmt.Fprintf(w, "%s\t%s\t%d\t%s\n", i.Name, i.Location, i.Size, i.Created.Format(time.RFC3339))
		}
		return w.Flush()
	}
	return fmt.Errorf("--output %q: want table or json", c.String("output"))
}

func snapshotDelete(c *ucli.Context) error {
	if c.NArg() == 0 {
		return errors.New("name the snapshots to delete (see `orch etcd-snapshot ls`)")
	}
	deleted, err := snapshots.Delete(snapshotDirOf(c), c.Args().Slice())
	for _, name := range deleted {
		fmt.Fprintf(c.App.Writer, "Snapshot %s deleted.\n", name)
	}
	return err
}

func snapshotPrune(c *ucli.Context) error {
	pruned, err := snapshots.Prune(snapshotDirOf(c), c.String("name"), c.Int("snapshot-retention"))
	for _, name := range pruned {
		fmt.Fprintf(c.App.Writer, "Snapshot %s deleted.\n", name)
	}
	return err
}
