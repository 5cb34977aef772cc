package eventttl

import (
	"context"
	"time"

	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// Defaults of Config.
const (
	DefaultTTL   = time.Hour
	DefaultSweep = 10 * time.Minute
	pageSize     = 500
)

// Config configures a Sweeper.
type Config struct {
	Client kubernetes.Interface
	TTL    time.Duration    // 0 = DefaultTTL
	Every  time.Duration    // 0 = DefaultSweep
	Now    func() time.Time // nil = time.Now (a seam for tests)
	Logger *zap.Logger      // nil = no logging
}

// Sweeper deletes expired Events. Run it only on the Raft leader.
type Sweeper struct {
	cfg Config
	log *zap.Logger
}

// New returns a Sweeper with defaults filled in.
func New(cfg Config) *Sweeper {
	if cfg.TTL <= 0 {
		cfg.TTL = DefaultTTL
	}
	if cfg.Every <= 0 {
		cfg.Every = DefaultSweep
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = zap.NewNop()
	}
	return &Sweeper{cfg: cfg, log: cfg.Logger.Named("eventttl")}
}

// Run sweeps at start and then every cfg.Every until ctx ends.
func (s *Sweeper) Run(ctx context.Context) {
	t := time.NewTicker(s.cfg.Every)
	defer t.Stop()
	for {
		if n, err := s.Sweep(ctx); err != nil && ctx.Err() == nil {
			s.log.Warn("sweeping expired events", zap.Error(err))
		} else if n > 0 {
			s.log.Debug("deleted expired events", zap.Int("count", n))
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Sweep deletes every Event (core/v1 and events.k8s.io/v1, which orch
// stores apart, see server/registry) whose last observation is older than
// the TTL, and returns how many it deleted.
func (s *Sweeper) Sweep(ctx context.Context) (int, error) {
	cutoff := s.cfg.Now().Add(-s.cfg.TTL)
	core := s.cfg.Client.CoreV1()
	n, err := sweepPages(ctx, func(o metav1.ListOptions) ([]expiring, string, error) {
		l, err := core.Events(metav1.NamespaceAll).List(ctx, o)
		if err != nil {
			return nil, "", err
		}
		out := make([]expiring, len(l.Items))
		for i := range l.Items {
			ev := &l.Items[i]
			out[i] = expiring{ev.ObjectMeta, coreLastSeen(ev), core.Events(ev.Namespace).Delete}
		}
		return out, l.Continue, nil
	}, cutoff)
	if err != nil {
		return n, err
	}
	ev1 := s.cfg.Client.EventsV1()
	m, err := sweepPages(ctx, func(o metav1.ListOptions) ([]expiring, string, error) {
		l, err := ev1.Events(metav1.NamespaceAll).List(ctx, o)
		if err != nil {
			return nil, "", err
		}
		out := make([]expiring, len(l.Items))
		for i := range l.Items {
			ev := &l.Items[i]
			out[i] = expiring{ev.ObjectMeta, v1LastSeen(ev), ev1.Events(ev.Namespace).Delete}
		}
		return out, l.Continue, nil
	}, cutoff)
	return n + m, err
}

// expiring is one Event of either API with its last observation and the
// delete call of its namespace.
type expiring struct {
	meta     metav1.ObjectMeta
	lastSeen time.Time
	del      func(ctx context.Context, name string, opts metav1.DeleteOptions) error
}

// sweepPages lists page by page and deletes what was last seen before cutoff.
func sweepPages(ctx context.Context, list func(metav1.ListOptions) ([]expiring, string, error), cutoff time.Time) (int, error) {
	deleted := 0
	opts := metav1.ListOptions{Limit: pageSize}
	for {
		items, cont, err := list(opts)
		if err != nil {
			return deleted, err
		}
		for _, it := range items {
			if !it.lastSeen.Before(cutoff) {
				continue
			}
			if err := deleteIfUnchanged(ctx, it); err != nil {
				return deleted, err
			}
			deleted++
		}
		if opts.Continue = cont; cont == "" {
			return deleted, nil
		}
	}
}

// deleteIfUnchanged deletes with a resourceVersion precondition: an Event
// updated since the list (its count bumped) is not expired any more.
func deleteIfUnchanged(ctx context.Context, it expiring) error {
	rv := it.meta.ResourceVersion
	err := it.del(ctx, it.meta.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{ResourceVersion: &rv}})
	if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
		return nil
	}
	return err
}

// coreLastSeen is the latest time a core/v1 Event says it was observed.
func coreLastSeen(ev *corev1.Event) time.Time {
	t := latest(ev.CreationTimestamp.Time, ev.LastTimestamp.Time, ev.FirstTimestamp.Time, ev.EventTime.Time)
	if ev.Series != nil {
		t = latest(t, ev.Series.LastObservedTime.Time)
	}
	return t
}

// v1LastSeen is the latest time an events.k8s.io/v1 Event says it was observed.
func v1LastSeen(ev *eventsv1.Event) time.Time {
	t := latest(ev.CreationTimestamp.Time, ev.EventTime.Time, ev.DeprecatedLastTimestamp.Time)
	if ev.Series != nil {
		t = latest(t, ev.Series.LastObservedTime.Time)
	}
	return t
}

func latest(ts ...time.Time) time.Time {
	var t time.Time
	for _, c := range ts {
		if c.After(t) {
			t = c
		}
	}
	return t
}
