package reliability

import (
	"context"
	"net/http"
	"strconv"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
)

// watcher follows the namespace's ConfigMaps on one server for a round,
// resuming from the last revision after every break and re-listing on 410.
type watcher struct {
	cs kubernetes.Interface
	mu sync.Mutex
	w  WatchLog
}

func newWatcher(cs kubernetes.Interface, server int, fromRV int64) *watcher {
	return &watcher{cs: cs, w: WatchLog{Server: server, StartRV: fromRV}}
}

func (w *watcher) log() WatchLog {
	w.mu.Lock()
	defer w.mu.Unlock()
	l := w.w
	l.Events = append([]WatchEvent(nil), w.w.Events...)
	l.Gaps = append([]Gap(nil), w.w.Gaps...)
	return l
}

func (w *watcher) lastRV() int64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.w.LastRV()
}

// run watches until ctx ends.
func (w *watcher) run(ctx context.Context) {
	first := true
	for ctx.Err() == nil {
		if !first {
			time.Sleep(200 * time.Millisecond)
		}
		first = false
		from := w.lastRV()
		wi, err := w.cs.CoreV1().ConfigMaps(namespace).Watch(ctx, metav1.ListOptions{
			ResourceVersion: strconv.FormatInt(from, 10)})
		if err != nil {
			if gone(err) {
				w.relist(ctx, from)
			}
			continue
		}
		expired := w.consume(ctx, wi)
		wi.Stop()
		if expired {
			w.relist(ctx, from)
			continue
		}
		w.mu.Lock()
		w.w.Reconnects++
		w.mu.Unlock()
	}
}

// consume records the events of one watch call; it reports a 410.
func (w *watcher) consume(ctx context.Context, wi watch.Interface) bool {
	for {
		select {
		case <-ctx.Done():
			return false
		case ev, ok := <-wi.ResultChan():
			if !ok {
				return false
			}
			switch o := ev.Object.(type) {
			case *corev1.ConfigMap:
				w.mu.Lock()
				w.w.Events = append(w.w.Events, WatchEvent{Type: string(ev.Type), Key: o.Name, Value: o.Data["v"], RV: rvOf(o)})
				w.mu.Unlock()
			case *metav1.Status:
				return o.Code == http.StatusGone
			}
		}
	}
}

// relist records a 410: the watch continues from a fresh list's revision,
// skipping (from, listRV].
func (w *watcher) relist(ctx context.Context, from int64) {
	for ctx.Err() == nil {
		l, err := w.cs.CoreV1().ConfigMaps(namespace).List(ctx, metav1.ListOptions{})
		if err == nil {
			rv, _ := strconv.ParseInt(l.ResourceVersion, 10, 64)
			w.mu.Lock()
			w.w.Relists++
			w.w.Gaps = append(w.w.Gaps, Gap{From: from, To: rv})
			w.mu.Unlock()
			return
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func gone(err error) bool {
	return apierrors.IsResourceExpired(err) || apierrors.IsGone(err)
}
