package datastore

import (
	"crypto/tls"
	"errors"
	"time"

	"go.uber.org/zap"
)

// Config configures a RaftStore.
type Config struct {
	// Dir holds raft.db (raft log and stable store), snapshots/ and
	// state.db (the FSM state). Created with mode 0700 when missing.
	Dir string
	// NodeID is this server's unique raft ID.
	NodeID string
	// BindAddr is the host:port the raft TCP transport listens on.
	BindAddr string
	// AdvertiseAddr is the host:port peers dial; defaults to the bound
	// address (which must then not be 0.0.0.0).
	AdvertiseAddr string
	// ServerTLS and ClientTLS secure the transport with mutual TLS; client
	// certificates are always required.
	ServerTLS *tls.Config
	ClientTLS *tls.Config
	// Bootstrap makes this server a single-voter cluster when the directory
	// holds no raft state; with existing state it just recovers.
	Bootstrap bool
	// HistorySize is how many watch events are kept for resume (default 1000).
	HistorySize int
	// SnapshotThreshold is how many new log entries trigger a snapshot
	// (default 16384); TrailingLogs is how many entries stay in the log after
	// it (default 10240).
	SnapshotThreshold uint64
	TrailingLogs      uint64
	// SnapshotInterval is how often raft checks the threshold (default 30s).
	SnapshotInterval time.Duration
	// Logger receives the store's logs (default: none).
	Logger *zap.Logger
	// BootID identifies this boot of the machine (default: the kernel's
	// random boot_id). A state file left with unsynced writes under another
	// boot is rebuilt (see syncmode.go); tests set it to simulate a reboot.
	BootID string
}

func (c *Config) validate() error {
	switch {
	case c.Dir == "":
		return errors.New("datastore: Config.Dir is required")
	case c.NodeID == "":
		return errors.New("datastore: Config.NodeID is required")
	case c.BindAddr == "":
		return errors.New("datastore: Config.BindAddr is required")
	}
	return nil
}

func (c *Config) setDefaults() {
	if c.HistorySize <= 0 {
		c.HistorySize = 1000
	}
	if c.SnapshotThreshold == 0 {
		c.SnapshotThreshold = 16384
	}
	if c.TrailingLogs == 0 {
		c.TrailingLogs = 10240
	}
	if c.SnapshotInterval == 0 {
		c.SnapshotInterval = 30 * time.Second
	}
	if c.Logger == nil {
		c.Logger = zap.NewNop()
	}
	if c.BootID == "" {
		c.BootID = readBootID()
	}
}
