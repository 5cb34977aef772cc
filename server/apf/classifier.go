package apf

import (
	"cmp"
	"fmt"
	"io"
	"math"
	"net/http"
	"slices"
	"sync/atomic"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/orch/orch/server/auth"
)

// ServerConcurrencyLimit is the seats shared out among the priority levels:
// kube-apiserver's default --max-requests-inflight (400) plus
// --max-mutating-requests-inflight (200).
const ServerConcurrencyLimit = 600

// Result is what a request was classified to.
type Result struct {
	FlowSchema, PriorityLevel                   string
	FlowSchemaUID, PriorityLevelUID             types.UID
	MatchingPrecedence, NominalConcurrencyLimit int32
}

// level is one priority level of a snapshot.
type level struct {
	name    string
	uid     types.UID
	nominal int32 // nominal concurrency limit, seats
}

// schema is one FlowSchema of a snapshot with its level.
type schema struct {
	fs    *flowcontrolv1.FlowSchema
	level *level
}

// snapshot is an immutable view of the configuration.
type snapshot struct {
	schemas []schema // in matching order
	levels  []*level // by name
}

// Classifier classifies requests against the latest configuration given
// to Set. It is safe for concurrent use; a zero Classifier classifies
// nothing until Set.
type Classifier struct {
	snap atomic.Pointer[snapshot]
}

// Set installs a configuration. The objects are not modified or kept
// beyond what the classification needs.
func (c *Classifier) Set(fss []*flowcontrolv1.FlowSchema, pls []*flowcontrolv1.PriorityLevelConfiguration) {
	c.snap.Store(newSnapshot(fss, pls))
}

func newSnapshot(fss []*flowcontrolv1.FlowSchema, pls []*flowcontrolv1.PriorityLevelConfiguration) *snapshot {
	s := &snapshot{}
	byName := map[string]*level{}
	var shareSum float64
	for _, pl := range pls {
		shareSum += float64(shares(pl))
	}
	for _, pl := range pls {
		l := &level{name: pl.Name, uid: pl.UID}
		if shareSum > 0 {
			l.nominal = int32(math.Ceil(ServerConcurrencyLimit * float64(shares(pl)) / shareSum))
		}
		byName[pl.Name] = l
		s.levels = append(s.levels, l)
	}
	slices.SortFunc(s.levels, func(a, b *level) int { return cmp.Compare(a.name, b.name) })
	for _, fs := range fss {
		// A FlowSchema whose level does not exist (Dangling) classifies nothing.
		if l := byName[fs.Spec.PriorityLevelConfiguration.Name]; l != nil {
			s.schemas = append(s.schemas, schema{fs: fs, level: l})
		}
	}
	slices.SortFunc(s.schemas, func(a, b schema) int {
		return cmp.Or(cmp.Compare(a.fs.Spec.MatchingPrecedence, b.fs.Spec.MatchingPrecedence), cmp.Compare(a.fs.Name, b.fs.Name))
	})
	return s
}

// shares is a level's nominalConcurrencyShares as defaulted (exempt
// levels' count too, as upstream's sum does).
func shares(pl *flowcontrolv1.PriorityLevelConfiguration) int32 {
	switch {
	case pl.Spec.Limited != nil:
		return ptr.Deref(pl.Spec.Limited.NominalConcurrencyShares, 30)
	case pl.Spec.Exempt != nil:
		return ptr.Deref(pl.Spec.Exempt.NominalConcurrencyShares, 0)
	}
	return 0
}

// Classify returns the FlowSchema that matches the request first and its
// priority level; false when none matches (or no configuration is set).
func (c *Classifier) Classify(a *auth.Attributes) (Result, bool) {
	s := c.snap.Load()
	if s == nil {
		return Result{}, false
	}
	for _, sc := range s.schemas {
		if matches(sc.fs, a) {
			return Result{FlowSchema: sc.fs.Name, FlowSchemaUID: sc.fs.UID, MatchingPrecedence: sc.fs.Spec.MatchingPrecedence,
				PriorityLevel: sc.level.name, PriorityLevelUID: sc.level.uid, NominalConcurrencyLimit: sc.level.nominal}, true
		}
	}
	return Result{}, false
}

// WriteMetrics writes the priority levels' nominal limits in the
// Prometheus text format.
func (c *Classifier) WriteMetrics(w io.Writer) error {
	const name = "apiserver_flowcontrol_nominal_limit_seats"
	if _, err := fmt.Fprintf(w, "# HELP %s [BETA] Nominal number of execution seats configured for each priority level\n# TYPE %s gauge\n",
		name, name); err != nil {
		return fmt.Errorf("writing metrics: %w", err)
	}
	s := c.snap.Load()
	if s == nil {
		return nil
	}
	for _, l := range s.levels {
		if _, err := fmt.Fprintf(w, "%s{priority_level=%q} %d\n", name, l.name, l.nominal); err != nil {
			return fmt.Errorf("writing metrics: %w", err)
		}
	}
	return nil
}

// Response headers of a classified request (upstream's
// flowcontrolv1.ResponseHeaderMatched*UID).
const (
	HeaderFlowSchemaUID    = flowcontrolv1.ResponseHeaderMatchedFlowSchemaUID
	HeaderPriorityLevelUID = flowcontrolv1.ResponseHeaderMatchedPriorityLevelConfigurationUID
)

// ResponseHeaders sets the headers naming the FlowSchema and priority
// level a request is classified to; none when it matches no FlowSchema.
func (c *Classifier) ResponseHeaders(a *auth.Attributes, h http.Header) {
	if r, ok := c.Classify(a); ok {
		h.Set(HeaderFlowSchemaUID, string(r.FlowSchemaUID))
		h.Set(HeaderPriorityLevelUID, string(r.PriorityLevelUID))
	}
}
