package snapshots

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"

	"github.com/orch/orch/datastore"
	"github.com/orch/orch/internal/pki"
)

// testStore opens a one-voter store on loopback with a fresh cluster CA and
// writes n keys; both are closed at cleanup.
func testStore(t *testing.T, n int) (*datastore.RaftStore, *pki.Bundle) {
	t.Helper()
	dir := t.TempDir()
	log := zaptest.NewLogger(t)
	b, err := pki.LoadOrCreate(filepath.Join(dir, "tls"), pki.Options{AdvertiseAddress: "127.0.0.1",
		ClusterDomain: "cluster.local", ServiceCIDR: "10.43.0.0/16", Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s, err := datastore.Open(ctx, datastore.Config{Dir: filepath.Join(dir, "db"), NodeID: "n1", BindAddr: "127.0.0.1:0",
		ServerTLS: b.PeerServerTLS(), ClientTLS: b.PeerClientTLS(), Bootstrap: true, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	if err := s.WaitLeader(ctx); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < n; i++ {
		if _, err := s.Create(ctx, "/k/"+string(rune('a'+i)), []byte("v")); err != nil {
			t.Fatal(err)
		}
	}
	return s, b
}
