package server

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/orch/orch/internal/metrics"
)

// newPrometheus is the server's /metrics registry: the Go and process
// collectors, the API server's request metrics (registered by
// apiserver.New), API Priority and Fairness, the embedded datastore's
// orch_datastore_* (not with an external etcd) and the controllers'
// workqueue_* and scheduler_* (through kit.Options.Metrics).
func newPrometheus(d *data, parts *parts) (*prometheus.Registry, error) {
	reg := metrics.NewRegistry()
	cs := []prometheus.Collector{parts.apf}
	if d.raft != nil {
		cs = append(cs, d.raft.Collector())
	}
	for _, c := range cs {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return reg, nil
}
