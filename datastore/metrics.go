package datastore

import (
	"time"

	"github.com/hashicorp/raft"
	"github.com/prometheus/client_golang/prometheus"
	bolt "go.etcd.io/bbolt"
)

// storeMetrics are the RaftStore's Prometheus metrics (orch_datastore_*,
// named after etcd's where the concept is the same). Histograms and
// counters are observed where the event happens (a write on the leader, a
// raft log append, an FSM batch, a leader observation); the gauges are
// read from raft and bbolt when scraped.
type storeMetrics struct {
	apply, fsync, commit          prometheus.Histogram
	leaderChanges                 prometheus.Counter
	proposalsCommitted, proposals prometheus.Counter
	proposalsFailed               prometheus.Counter
	proposalsPending              prometheus.Gauge
	funcs                         []prometheus.Collector
}

// diskBuckets are etcd's buckets for its disk latencies (1ms .. 8s).
var diskBuckets = prometheus.ExponentialBuckets(0.001, 2, 14)

func newStoreMetrics() *storeMetrics {
	h := func(name, help string) prometheus.Histogram {
		return prometheus.NewHistogram(prometheus.HistogramOpts{Namespace: "orch", Subsystem: "datastore", Name: name,
			Help: help, Buckets: diskBuckets})
	}
	c := func(name, help string) prometheus.Counter {
		return prometheus.NewCounter(prometheus.CounterOpts{Namespace: "orch", Subsystem: "datastore", Name: name, Help: help})
	}
	return &storeMetrics{
		apply: h("raft_apply_duration_seconds",
			"Time from proposing a write to raft on the leader until it is committed by a quorum and applied to the state."),
		fsync: h("wal_fsync_duration_seconds",
			"Time to append entries to the raft log (raft-boltdb transaction with its fsync), as etcd_disk_wal_fsync_duration_seconds."),
		commit: h("backend_commit_duration_seconds",
			"Time to apply a batch of committed entries to the bbolt state file (one transaction, fsynced only while orch_datastore_state_unsynced is 0), as etcd_disk_backend_commit_duration_seconds."),
		leaderChanges: c("leader_changes_seen_total", "Number of leader changes seen by this server."),
		proposals:     c("proposals_total", "Number of writes proposed to raft by this server as leader."),
		proposalsCommitted: c("proposals_committed_total",
			"Number of proposed writes committed and applied."),
		proposalsFailed: c("proposals_failed_total", "Number of proposed writes that failed (lost leadership, timeout, shutdown)."),
		proposalsPending: prometheus.NewGauge(prometheus.GaugeOpts{Namespace: "orch", Subsystem: "datastore",
			Name: "proposals_pending", Help: "Number of proposed writes waiting to be committed."}),
	}
}

// gauges adds the gauges read from s at scrape time.
func (m *storeMetrics) gauges(s *RaftStore) {
	g := func(name, help string, f func() float64) prometheus.Collector {
		return prometheus.NewGaugeFunc(prometheus.GaugeOpts{Namespace: "orch", Subsystem: "datastore", Name: name, Help: help}, f)
	}
	m.funcs = []prometheus.Collector{
		g("has_leader", "Whether a leader exists (1) or not (0).", func() float64 {
			addr, _ := s.raft.LeaderWithID()
			return boolGauge(addr != "")
		}),
		g("is_leader", "Whether this server is the leader (1) or not (0).", func() float64 {
			return boolGauge(s.raft.State() == raft.Leader)
		}),
		g("db_total_size_in_bytes", "Size of the bbolt state file in bytes, as etcd_mvcc_db_total_size_in_bytes.", func() float64 {
			var n int64
			_ = s.fsm.view(func(tx *bolt.Tx) error { n = tx.Size(); return nil })
			return float64(n)
		}),
		g("state_unsynced", "Whether the state file's commits skip fsync (1) because the raft snapshot and log can rebuild it, or are fsynced (0).", func() float64 {
			return boolGauge(s.fsm.isUnsynced())
		}),
		g("applied_index", "The last raft log index applied to the state.", func() float64 {
			return float64(s.raft.AppliedIndex())
		}),
		g("revision", "The store's current revision (the latest resourceVersion).", func() float64 {
			return float64(s.Revision())
		}),
	}
}

func boolGauge(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

func (m *storeMetrics) all() []prometheus.Collector {
	return append([]prometheus.Collector{m.apply, m.fsync, m.commit, m.leaderChanges, m.proposals,
		m.proposalsCommitted, m.proposalsFailed, m.proposalsPending}, m.funcs...)
}

// Describe implements prometheus.Collector.
func (m *storeMetrics) Describe(ch chan<- *prometheus.Desc) {
	for _, c := range m.all() {
		c.Describe(ch)
	}
}

// Collect implements prometheus.Collector.
func (m *storeMetrics) Collect(ch chan<- prometheus.Metric) {
	for _, c := range m.all() {
		c.Collect(ch)
	}
}

// Collector returns the store's metrics for a registry (register it once).
func (s *RaftStore) Collector() prometheus.Collector { return s.metrics }

// proposed records one write proposed on the leader.
func (m *storeMetrics) proposed(start time.Time, err error) {
	m.proposals.Inc()
	if err != nil {
		m.proposalsFailed.Inc()
		return
	}
	m.proposalsCommitted.Inc()
	m.apply.Observe(time.Since(start).Seconds())
}

// timedLogStore times appends to the raft log.
type timedLogStore struct {
	raft.LogStore
	h prometheus.Histogram
}

// StoreLog implements raft.LogStore.
func (t timedLogStore) StoreLog(l *raft.Log) error {
	defer t.observe(time.Now())
	return t.LogStore.StoreLog(l)
}

// StoreLogs implements raft.LogStore.
func (t timedLogStore) StoreLogs(logs []*raft.Log) error {
	defer t.observe(time.Now())
	return t.LogStore.StoreLogs(logs)
}

func (t timedLogStore) observe(start time.Time) { t.h.Observe(time.Since(start).Seconds()) }
