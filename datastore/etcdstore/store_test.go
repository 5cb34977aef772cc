package etcdstore_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"

	"github.com/orch/orch/datastore"
	"github.com/orch/orch/datastore/etcdstore"
	"github.com/orch/orch/datastore/etcdstore/etcdtest"
	"github.com/orch/orch/datastore/storetest"
)

// open returns a store on e under its own key prefix, closed when t ends.
func open(t *testing.T, e *etcdtest.Etcd, prefix string, mod func(*etcdstore.Config)) *etcdstore.Store {
	t.Helper()
	cfg := etcdstore.Config{Endpoints: []string{e.Endpoint}, TLS: e.TLS(t), Prefix: prefix,
		CompactInterval: -1, Logger: zaptest.NewLogger(t)}
	if mod != nil {
		mod(&cfg)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := etcdstore.Open(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// TestContract runs the datastore contract suite against a real etcd; each
// case gets a fresh key prefix, which is an empty store.
func TestContract(t *testing.T) {
	e := etcdtest.Start(t)
	n := 0
	storetest.Run(t, func(t *testing.T) datastore.Store {
		n++
		return open(t, e, fmt.Sprintf("/case%d", n), func(c *etcdstore.Config) {
			c.HistoryRevisions = storetest.HistorySize
		})
	})
}
