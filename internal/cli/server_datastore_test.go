package cli

import (
	"testing"
	"time"

	"github.com/orch/orch/server"
)

func TestDatastoreFlags(t *testing.T) {
	if got, err := runServerFlags(t, "--config", writeFile(t, "")); err != nil || got.Datastore != (server.DatastoreConfig{}) {
		t.Fatalf("default = %+v, %v; want the embedded store", got.Datastore, err)
	}
	cfgFile := writeFile(t, "datastore-endpoint: https://e1:2379,https://e2:2379\ndatastore-cafile: /etc/ca.crt\n"+
		"datastore-compaction-interval: 10m\n")
	t.Setenv("ORCH_DATASTORE_CERTFILE", "/etc/c.crt")
	got, err := runServerFlags(t, "--config", cfgFile, "--datastore-keyfile", "/etc/c.key")
	if err != nil {
		t.Fatal(err)
	}
	want := server.DatastoreConfig{Endpoint: "https://e1:2379,https://e2:2379", CAFile: "/etc/ca.crt",
		CertFile: "/etc/c.crt", KeyFile: "/etc/c.key", CompactInterval: 10 * time.Minute}
	if got.Datastore != want {
		t.Fatalf("datastore config = %+v, want %+v", got.Datastore, want)
	}
}
