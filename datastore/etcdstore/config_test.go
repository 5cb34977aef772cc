package etcdstore

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"go.etcd.io/etcd/api/v3/mvccpb"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/orch/orch/datastore"
)

func TestParseEndpoints(t *testing.T) {
	for in, want := range map[string][]string{
		"":                               nil,
		"https://a:2379":                 {"https://a:2379"},
		" https://a:2379, ,https://b:1 ": {"https://a:2379", "https://b:1"},
	} {
		if got := ParseEndpoints(in); !slices.Equal(got, want) {
			t.Errorf("ParseEndpoints(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestConfigRejectsBadEndpoints(t *testing.T) {
	for _, eps := range [][]string{nil, {"etcd1:2379"}, {"ftp://etcd1:2379"}, {"https://"}} {
		c := Config{Endpoints: eps}
		if _, err := c.withDefaults(); err == nil {
			t.Errorf("endpoints %q accepted", eps)
		}
	}
	c := Config{Endpoints: []string{"https://127.0.0.1:2379"}}
	got, err := c.withDefaults()
	if err != nil || got.CompactInterval != DefaultCompactInterval || got.Logger == nil {
		t.Fatalf("defaults = %+v, %v", got, err)
	}
}

func TestLoadTLSErrors(t *testing.T) {
	dir := t.TempDir()
	notPEM := filepath.Join(dir, "x.pem")
	if err := os.WriteFile(notPEM, []byte("nonsense"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ ca, cert, key, want string }{
		{ca: filepath.Join(dir, "missing"), want: "--datastore-cafile"},
		{ca: notPEM, want: "no PEM certificate"},
		{cert: notPEM, want: "must be given together"},
		{cert: notPEM, key: notPEM, want: "--datastore-certfile"},
	} {
		_, err := LoadTLS(tc.ca, tc.cert, tc.key)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("LoadTLS(%q, %q, %q) = %v, want an error about %q", tc.ca, tc.cert, tc.key, err, tc.want)
		}
	}
	if cfg, err := LoadTLS("", "", ""); err != nil || cfg.RootCAs != nil {
		t.Fatalf("LoadTLS with no files = %+v, %v", cfg, err)
	}
}

func TestToEvent(t *testing.T) {
	prev := &mvccpb.KeyValue{Key: []byte("/k"), Value: []byte("old"), CreateRevision: 3, ModRevision: 5}
	tests := []struct {
		name string
		ev   *clientv3.Event
		want datastore.Event
	}{
		{"create", &clientv3.Event{Type: clientv3.EventTypePut,
			Kv: &mvccpb.KeyValue{Key: []byte("/k"), Value: []byte("v"), CreateRevision: 7, ModRevision: 7}},
			datastore.Event{Type: datastore.EventCreate, Revision: 7,
				KV: datastore.KV{Key: "/k", Value: []byte("v"), CreateRevision: 7, ModRevision: 7}}},
		{"update", &clientv3.Event{Type: clientv3.EventTypePut, PrevKv: prev,
			Kv: &mvccpb.KeyValue{Key: []byte("/k"), Value: []byte("v"), CreateRevision: 3, ModRevision: 7}},
			datastore.Event{Type: datastore.EventUpdate, Revision: 7,
				KV:     datastore.KV{Key: "/k", Value: []byte("v"), CreateRevision: 3, ModRevision: 7},
				PrevKV: &datastore.KV{Key: "/k", Value: []byte("old"), CreateRevision: 3, ModRevision: 5}}},
		{"delete", &clientv3.Event{Type: clientv3.EventTypeDelete, PrevKv: prev,
			Kv: &mvccpb.KeyValue{Key: []byte("/k"), ModRevision: 7}},
			datastore.Event{Type: datastore.EventDelete, Revision: 7,
				KV:     datastore.KV{Key: "/k", Value: []byte("old"), CreateRevision: 3, ModRevision: 7},
				PrevKV: &datastore.KV{Key: "/k", Value: []byte("old"), CreateRevision: 3, ModRevision: 5}}},
		{"delete without prev", &clientv3.Event{Type: clientv3.EventTypeDelete,
			Kv: &mvccpb.KeyValue{Key: []byte("/k"), ModRevision: 7}},
			datastore.Event{Type: datastore.EventDelete, Revision: 7, KV: datastore.KV{Key: "/k", ModRevision: 7}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := toEvent(tc.ev)
			if got.Type != tc.want.Type || got.Revision != tc.want.Revision || !sameKV(&got.KV, &tc.want.KV) ||
				!sameKV(got.PrevKV, tc.want.PrevKV) {
				t.Fatalf("toEvent = %+v (prev %+v), want %+v (prev %+v)", got, got.PrevKV, tc.want, tc.want.PrevKV)
			}
		})
	}
}

func sameKV(a, b *datastore.KV) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Key == b.Key && string(a.Value) == string(b.Value) && a.CreateRevision == b.CreateRevision && a.ModRevision == b.ModRevision
}

func TestNetWritesRefusesRecreate(t *testing.T) {
	state := map[string]*datastore.KV{"/k": {Key: "/k", Value: []byte("a"), CreateRevision: 1, ModRevision: 1}}
	events, err := datastore.EvalOps(func(k string) (*datastore.KV, error) { return state[k], nil }, []datastore.Op{
		{Type: datastore.OpDelete, Key: "/k"}, {Type: datastore.OpCreate, Key: "/k", Value: []byte("b")},
	}, 2)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := netWrites([]string{"/k"}, state, events); err == nil {
		t.Fatal("delete + re-create of one key accepted")
	}
	// create then delete of an absent key writes nothing
	events, err = datastore.EvalOps(func(string) (*datastore.KV, error) { return nil, nil }, []datastore.Op{
		{Type: datastore.OpCreate, Key: "/n"}, {Type: datastore.OpDelete, Key: "/n"},
	}, 2)
	if err != nil {
		t.Fatal(err)
	}
	if ops, err := netWrites([]string{"/n"}, map[string]*datastore.KV{"/n": nil}, events); err != nil || len(ops) != 0 {
		t.Fatalf("create+delete = %d ops, %v", len(ops), err)
	}
}

func TestMapErr(t *testing.T) {
	s := &Store{}
	for _, tc := range []struct {
		err  error
		want error
	}{
		{rpctypes.ErrCompacted, datastore.ErrCompacted},
		{rpctypes.ErrNoLeader, datastore.ErrNotLeader},
		{rpctypes.ErrLeaderChanged, datastore.ErrNotLeader},
		{status.Error(codes.Unavailable, "connection refused"), datastore.ErrNotLeader},
	} {
		if got := s.mapErr(tc.err); !errors.Is(got, tc.want) || !errors.Is(got, tc.err) {
			t.Errorf("mapErr(%v) = %v, want %v wrapping the original", tc.err, got, tc.want)
		}
	}
	if got := s.mapErr(rpctypes.ErrKeyNotFound); errors.Is(got, datastore.ErrNotLeader) {
		t.Errorf("mapErr(%v) = %v", rpctypes.ErrKeyNotFound, got)
	}
	s.closed.Store(true)
	if got := s.mapErr(rpctypes.ErrNoLeader); !errors.Is(got, datastore.ErrClosed) {
		t.Errorf("after Close: %v", got)
	}
}
