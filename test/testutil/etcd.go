package testutil

import (
	"os"
	"testing"

	"github.com/orch/orch/datastore/etcdstore/etcdtest"
)

// EnvEtcd, when set to 1, runs every test server on its own real etcd
// (--datastore-endpoint) instead of the embedded Raft store, so any suite
// can be run against the external-etcd datastore.
const EnvEtcd = "ORCH_TEST_ETCD"

// datastoreArgs starts an etcd for one server when EnvEtcd asks for it and
// returns the server flags that use it.
func datastoreArgs(t testing.TB) []string {
	if os.Getenv(EnvEtcd) != "1" {
		return nil
	}
	e := etcdtest.Start(t)
	return []string{"--datastore-endpoint", e.Endpoint, "--datastore-cafile", e.CAFile,
		"--datastore-certfile", e.CertFile, "--datastore-keyfile", e.KeyFile}
}
