package cli

import (
	ucli "github.com/urfave/cli/v2"

	"github.com/orch/orch/server"
)

// datastoreFlags select an external etcd instead of the embedded Raft store
// (k3s's names).
func datastoreFlags() []ucli.Flag {
	s := func(name, usage string) ucli.Flag {
		return &ucli.StringFlag{Name: name, Usage: usage, EnvVars: envVars(name)}
	}
	return []ucli.Flag{
		s("datastore-endpoint", "etcd client URLs (https://etcd1:2379,...): use this external etcd instead of the embedded Raft datastore"),
		s("datastore-cafile", "CA certificate that signed the etcd servers' certificates"),
		s("datastore-certfile", "client certificate for etcd"),
		s("datastore-keyfile", "client key for etcd"),
		&ucli.DurationFlag{Name: "datastore-compaction-interval", EnvVars: envVars("datastore-compaction-interval"),
			Usage: "how often the external etcd's history is compacted (0 = 5m, negative = never)"},
	}
}

func datastoreConfig(c *ucli.Context) server.DatastoreConfig {
	return server.DatastoreConfig{
		Endpoint: c.String("datastore-endpoint"), CAFile: c.String("datastore-cafile"),
		CertFile: c.String("datastore-certfile"), KeyFile: c.String("datastore-keyfile"),
		CompactInterval: c.Duration("datastore-compaction-interval"),
	}
}
