package load

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// WatchSpec configures the watch-latency test.
type WatchSpec struct {
	Namespace string
	Watchers  int
	Writes    int
	Interval  time.Duration // pause between writes
	Payload   int
	Prefix    string
	Timeout   time.Duration // for sync and for draining after the last write
}

// WatchResult is the outcome. Latency is from the create's response
// (acknowledgement) to receipt by a watcher; FromSend is from the moment the
// create request was sent (never negative).
type WatchResult struct {
	Watchers int     `json:"watchers"`
	Writes   int     `json:"writes"`
	Expected int     `json:"expected_deliveries"`
	Received int     `json:"received_deliveries"`
	Latency  Summary `json:"latency_from_ack"`
	FromSend Summary `json:"latency_from_send"`
}

type watcher struct {
	w      watch.Interface
	recv   []time.Time // by write index; zero = not received
	synced chan struct{}
	got    atomic.Int64
	done   chan struct{}
}

// RunWatch opens spec.Watchers watches (each on its own connection, watcher i
// on endpoint i mod len(endpoints)), then a single writer on endpoints[0]
// creates spec.Writes ConfigMaps and every delivery is timed.
func RunWatch(ctx context.Context, endpoints []*rest.Config, spec WatchSpec) (WatchResult, error) {
	res := WatchResult{Watchers: spec.Watchers, Writes: spec.Writes, Expected: spec.Watchers * spec.Writes}
	cfg, err := Endpoint(endpoints, 0)
	if err != nil {
		return res, err
	}
	writer, err := NewClient(cfg)
	if err != nil {
		return res, err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	watchers, err := openWatchers(ctx, endpoints, writer, spec)
	defer func() {
		for _, w := range watchers {
			w.w.Stop()
		}
	}()
	if err != nil {
		return res, err
	}
	if err := syncWatchers(ctx, writer, spec, watchers); err != nil {
		return res, err
	}
	sent, acked, err := writeAll(ctx, writer, spec)
	if err != nil {
		return res, err
	}
	drain(ctx, watchers, spec.Timeout)
	cancel()
	for _, w := range watchers {
		w.w.Stop()
	}
	res.Received, res.Latency, res.FromSend = deliveries(watchers, sent, acked)
	return res, nil
}

func openWatchers(ctx context.Context, endpoints []*rest.Config, writer kubernetes.Interface, spec WatchSpec) ([]*watcher, error) {
	// A list with limit=1 yields the current revision without reading every
	// object; watching from it delivers only new events.
	list, err := writer.CoreV1().ConfigMaps(spec.Namespace).List(ctx, metav1.ListOptions{Limit: 1})
	if err != nil {
		return nil, fmt.Errorf("list for starting resourceVersion: %w", err)
	}
	var watchers []*watcher
	for i := range spec.Watchers {
		cfg, err := Endpoint(endpoints, i)
		if err != nil {
			return watchers, err
		}
		cs, err := NewClient(cfg)
		if err != nil {
			return watchers, err
		}
		wi, err := cs.CoreV1().ConfigMaps(spec.Namespace).Watch(ctx, metav1.ListOptions{ResourceVersion: list.ResourceVersion})
		if err != nil {
			return watchers, fmt.Errorf("open watch %d at resourceVersion %s: %w", i, list.ResourceVersion, err)
		}
		w := &watcher{w: wi, recv: make([]time.Time, spec.Writes), synced: make(chan struct{}), done: make(chan struct{})}
		watchers = append(watchers, w)
		go w.run(spec)
	}
	return watchers, nil
}

func (w *watcher) run(spec WatchSpec) {
	defer close(w.done)
	syncName := spec.Prefix + "-sync"
	synced := false
	for ev := range w.w.ResultChan() {
		now := time.Now()
		cm, ok := ev.Object.(*corev1.ConfigMap)
		if ev.Type != watch.Added || !ok {
			continue
		}
		if cm.Name == syncName && !synced {
			synced = true
			close(w.synced)
			continue
		}
		idx, ok := writeIndex(cm.Name, spec.Prefix)
		if !ok || idx >= len(w.recv) || !w.recv[idx].IsZero() {
			continue
		}
		w.recv[idx] = now
		w.got.Add(1)
	}
}

func writeIndex(name, prefix string) (int, bool) {
	rest, ok := strings.CutPrefix(name, prefix+"-w")
	if !ok {
		return 0, false
	}
	i, err := strconv.Atoi(rest)
	return i, err == nil && i >= 0
}

// syncWatchers creates a marker object and waits until every watcher saw it,
// proving all watches are live before measured writes start.
func syncWatchers(ctx context.Context, writer kubernetes.Interface, spec WatchSpec, ws []*watcher) error {
	obj := configMap(spec.Namespace, spec.Prefix+"-sync", "sync")
	if _, err := writer.CoreV1().ConfigMaps(spec.Namespace).Create(ctx, obj, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("create sync marker: %w", err)
	}
	timeout := time.After(spec.Timeout)
	for i, w := range ws {
		select {
		case <-w.synced:
		case <-w.done:
			return fmt.Errorf("watcher %d closed before the sync marker arrived", i)
		case <-timeout:
			return fmt.Errorf("watcher %d did not see the sync marker within %s", i, spec.Timeout)
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

func writeAll(ctx context.Context, writer kubernetes.Interface, spec WatchSpec) (sent, acked []time.Time, err error) {
	data := payload(spec.Payload)
	cms := writer.CoreV1().ConfigMaps(spec.Namespace)
	for i := range spec.Writes {
		obj := configMap(spec.Namespace, fmt.Sprintf("%s-w%d", spec.Prefix, i), data)
		t0 := time.Now()
		if _, err := cms.Create(ctx, obj, metav1.CreateOptions{}); err != nil {
			return sent, acked, fmt.Errorf("create watched object %d: %w", i, err)
		}
		sent, acked = append(sent, t0), append(acked, time.Now())
		time.Sleep(spec.Interval)
	}
	return sent, acked, nil
}

// drain waits until every watcher has every event, or the timeout passes.
func drain(ctx context.Context, ws []*watcher, timeout time.Duration) {
	var wg sync.WaitGroup
	deadline := time.Now().Add(timeout)
	for _, w := range ws {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for time.Now().Before(deadline) && ctx.Err() == nil {
				if w.complete(len(w.recv)) {
					return
				}
				time.Sleep(10 * time.Millisecond)
			}
		}()
	}
	wg.Wait()
}

func (w *watcher) complete(want int) bool {
	select {
	case <-w.done:
		return true
	default:
	}
	return w.got.Load() >= int64(want)
}

func deliveries(ws []*watcher, sent, acked []time.Time) (int, Summary, Summary) {
	var fromAck, fromSend []time.Duration
	for _, w := range ws {
		<-w.done
		for i, t := range w.recv {
			if t.IsZero() || i >= len(acked) {
				continue
			}
			fromAck = append(fromAck, t.Sub(acked[i]))
			fromSend = append(fromSend, t.Sub(sent[i]))
		}
	}
	return len(fromAck), Summarize(fromAck), Summarize(fromSend)
}
