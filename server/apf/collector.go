package apf

import "github.com/prometheus/client_golang/prometheus"

var nominalLimitDesc = prometheus.NewDesc("apiserver_flowcontrol_nominal_limit_seats",
	"[BETA] Nominal number of execution seats configured for each priority level", []string{"priority_level"}, nil)

var _ prometheus.Collector = (*Classifier)(nil)

// Describe implements prometheus.Collector.
func (c *Classifier) Describe(ch chan<- *prometheus.Desc) { ch <- nominalLimitDesc }

// Collect implements prometheus.Collector: the same nominal limits
// WriteMetrics writes, read from the current configuration at scrape time.
func (c *Classifier) Collect(ch chan<- prometheus.Metric) {
	s := c.snap.Load()
	if s == nil {
		return
	}
	for _, l := range s.levels {
		ch <- prometheus.MustNewConstMetric(nominalLimitDesc, prometheus.GaugeValue, float64(l.nominal), l.name)
	}
}
