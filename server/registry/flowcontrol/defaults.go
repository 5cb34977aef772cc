package flowcontrol

import (
	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	"k8s.io/utils/ptr"
)

// Upstream's v1 defaults (pkg/apis/flowcontrol/v1/defaults.go).
const (
	defaultMatchingPrecedence       int32 = 1000
	defaultHandSize                 int32 = 8
	defaultQueues                   int32 = 64
	defaultQueueLengthLimit         int32 = 50
	defaultNominalConcurrencyShares int32 = 30
)

// DefaultFlowSchema fills the defaulted fields of fs.
func DefaultFlowSchema(fs *flowcontrolv1.FlowSchema) {
	if fs.Spec.MatchingPrecedence == 0 {
		fs.Spec.MatchingPrecedence = defaultMatchingPrecedence
	}
}

// DefaultPriorityLevel fills the defaulted fields of pl.
func DefaultPriorityLevel(pl *flowcontrolv1.PriorityLevelConfiguration) {
	if e := pl.Spec.Exempt; e != nil {
		e.NominalConcurrencyShares = ptr.To(ptr.Deref(e.NominalConcurrencyShares, 0))
		e.LendablePercent = ptr.To(ptr.Deref(e.LendablePercent, 0))
	}
	l := pl.Spec.Limited
	if l == nil {
		return
	}
	l.NominalConcurrencyShares = ptr.To(ptr.Deref(l.NominalConcurrencyShares, defaultNominalConcurrencyShares))
	l.LendablePercent = ptr.To(ptr.Deref(l.LendablePercent, 0))
	if q := l.LimitResponse.Queuing; q != nil {
		for _, f := range []struct {
			v   *int32
			def int32
		}{{&q.HandSize, defaultHandSize}, {&q.Queues, defaultQueues}, {&q.QueueLengthLimit, defaultQueueLengthLimit}} {
			if *f.v == 0 {
				*f.v = f.def
			}
		}
	}
}
