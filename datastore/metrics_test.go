package datastore_test

import (
	"context"
	"net/http/httptest"
	"testing"

	"github.com/orch/orch/datastore"
	"github.com/orch/orch/internal/metrics"
	"github.com/orch/orch/internal/metrics/metricstest"
)

func TestRaftStoreMetrics(t *testing.T) {
	s := datastore.OpenTest(t, datastore.NewTestConfig(t, t.TempDir()))
	reg := metrics.NewRegistry()
	reg.MustRegister(s.Collector())
	ctx := context.Background()
	for _, k := range []string{"/registry/a", "/registry/b", "/registry/c"} {
		if _, err := s.Create(ctx, k, []byte("v")); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.Create(ctx, "/registry/a", []byte("v")); err == nil {
		t.Fatal("duplicate create succeeded")
	}
	rec := httptest.NewRecorder()
	metrics.Handler(reg).ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	fams, err := metricstest.Parse(rec.Body)
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		name string
		min  float64
	}{
		{"orch_datastore_is_leader", 1},
		{"orch_datastore_has_leader", 1},
		{"orch_datastore_leader_changes_seen_total", 1},
		// A refused create (key exists) is still a committed proposal:
		// the FSM refuses it, raft does not.
		{"orch_datastore_proposals_total", 4},
		{"orch_datastore_proposals_committed_total", 4},
		{"orch_datastore_raft_apply_duration_seconds", 4},
		{"orch_datastore_wal_fsync_duration_seconds", 1},
		{"orch_datastore_backend_commit_duration_seconds", 1},
		{"orch_datastore_db_total_size_in_bytes", 4096},
		{"orch_datastore_revision", 3},
	}
	for _, w := range want {
		got, ok := fams.Find(w.name, nil)
		if !ok {
			t.Errorf("%s missing; have %s", w.name, fams.Names())
			continue
		}
		if got.Value < w.min {
			t.Errorf("%s = %v, want >= %v", w.name, got.Value, w.min)
		}
	}
	if got, _ := fams.Find("orch_datastore_proposals_failed_total", nil); got.Value != 0 {
		t.Errorf("proposals_failed_total = %v, want 0", got.Value)
	}
}
