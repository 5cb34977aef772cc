package metricstest

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// Families is a parsed exposition by metric family name.
type Families map[string]*dto.MetricFamily

// Parse parses the Prometheus text format.
func Parse(r io.Reader) (Families, error) {
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(r)
	if err != nil {
		return nil, fmt.Errorf("parsing metrics: %w", err)
	}
	return fams, nil
}

// Sample is one series of a family: its labels and value (a counter's,
// gauge's or untyped value; a histogram's sample count).
type Sample struct {
	Labels map[string]string
	Value  float64
}

// Samples lists the series of family name (nil when absent).
func (f Families) Samples(name string) []Sample {
	mf := f[name]
	if mf == nil {
		return nil
	}
	var out []Sample
	for _, m := range mf.GetMetric() {
		s := Sample{Labels: map[string]string{}}
		for _, lp := range m.GetLabel() {
			s.Labels[lp.GetName()] = lp.GetValue()
		}
		switch {
		case m.Counter != nil:
			s.Value = m.GetCounter().GetValue()
		case m.Gauge != nil:
			s.Value = m.GetGauge().GetValue()
		case m.Histogram != nil:
			s.Value = float64(m.GetHistogram().GetSampleCount())
		case m.Untyped != nil:
			s.Value = m.GetUntyped().GetValue()
		}
		out = append(out, s)
	}
	return out
}

// Find returns the first series of name whose labels include want.
func (f Families) Find(name string, want map[string]string) (Sample, bool) {
	for _, s := range f.Samples(name) {
		if matches(s.Labels, want) {
			return s, true
		}
	}
	return Sample{}, false
}

func matches(have, want map[string]string) bool {
	for k, v := range want {
		if have[k] != v {
			return false
		}
	}
	return true
}

// Names lists the family names, sorted (for test failure messages).
func (f Families) Names() string {
	names := make([]string, 0, len(f))
	for n := range f {
		names = append(names, n)
	}
	sort.Strings(names)
	return strings.Join(names, " ")
}

// Gather collects g into Families.
func Gather(g prometheus.Gatherer) (Families, error) {
	mfs, err := g.Gather()
	if err != nil {
		return nil, fmt.Errorf("gathering metrics: %w", err)
	}
	out := Families{}
	for _, mf := range mfs {
		out[mf.GetName()] = mf
	}
	return out, nil
}
