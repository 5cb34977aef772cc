package apf

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	"k8s.io/apiserver/pkg/apis/flowcontrol/bootstrap"

	"github.com/orch/orch/internal/metrics/metricstest"
)

// TestCollector: the Classifier as a Collector gives the same nominal
// limits as WriteMetrics, and none before it is configured.
func TestCollector(t *testing.T) {
	c := &Classifier{}
	reg := prometheus.NewRegistry()
	reg.MustRegister(c)
	if got := gather(t, reg).Samples("apiserver_flowcontrol_nominal_limit_seats"); len(got) != 0 {
		t.Fatalf("unconfigured: %v", got)
	}
	c.Set(nil, []*flowcontrolv1.PriorityLevelConfiguration{limited("a", 1), limited("b", 2),
		bootstrap.MandatoryPriorityLevelConfigurationExempt})
	fams := gather(t, reg)
	for level, want := range map[string]float64{"a": 200, "b": 400, "exempt": 0} {
		s, ok := fams.Find("apiserver_flowcontrol_nominal_limit_seats", map[string]string{"priority_level": level})
		if !ok || s.Value != want {
			t.Errorf("level %s: %v (found %v), want %v", level, s.Value, ok, want)
		}
	}
}

func gather(t *testing.T, g prometheus.Gatherer) metricstest.Families {
	t.Helper()
	f, err := metricstest.Gather(g)
	if err != nil {
		t.Fatal(err)
	}
	return f
}
