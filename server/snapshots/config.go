package snapshots

import (
	"errors"
	"fmt"
	"path/filepath"
)

// Defaults as in k3s.
const (
	DefaultName      = "etcd-snapshot" // scheduled snapshots
	OnDemandName     = "on-demand"     // `orch etcd-snapshot save` and prune
	DefaultCron      = "0 */12 * * *"
	DefaultRetention = 5
)

// Config is the snapshot part of `orch server`'s configuration.
type Config struct {
	// Dir holds the snapshot files (default DefaultDir).
	Dir string
	// ScheduleCron is the 5-field cron spec of automatic snapshots.
	ScheduleCron string
	// Retention is how many automatic snapshots are kept.
	Retention int
	// Disable turns automatic snapshots off.
	Disable bool
	// ClusterReset makes `orch server` reset the datastore to a one-member
	// cluster (restoring RestorePath first when set) and exit.
	ClusterReset bool
	RestorePath  string
}

// DefaultDir is where snapshots go when no directory is configured. It is
// not k3s's <data-dir>/server/db/snapshots: that is raft's own snapshot
// store in orch.
func DefaultDir(dataDir string) string {
	return filepath.Join(dataDir, "server", "db", "etcd-snapshots")
}

// Validate checks the flags; every error names the flag at fault.
func (c Config) Validate() error {
	if c.RestorePath != "" && !c.ClusterReset {
		return errors.New("--cluster-reset-restore-path can only be used with --cluster-reset")
	}
	if c.Disable {
		return nil
	}
	if c.Retention < 1 {
		return fmt.Errorf("--etcd-snapshot-retention %d must be at least 1", c.Retention)
	}
	if _, err := parseCron(c.ScheduleCron); err != nil {
		return fmt.Errorf("--etcd-snapshot-schedule-cron: %w", err)
	}
	return nil
}
