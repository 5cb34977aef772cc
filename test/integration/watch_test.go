package integration

import (
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/orch/orch/test/testutil"
)

func init() {
	register("WatchResumeNoLossUnderConcurrentWrites", testWatchResume)
	register("StaleUpdateConflict", testStaleUpdate)
}

// write is one acknowledged write: the object name and the resourceVersion
// the server answered with.
type write struct {
	typ  watch.EventType
	name string
	rv   string
}

// concurrentWrites creates, updates and deletes configmaps from several
// goroutines and returns every acknowledged write.
func concurrentWrites(t *testing.T, s *testutil.Server, ns string, workers, perWorker int) ([]write, error) {
	ctx := ctxT(t)
	c := s.Clientset.CoreV1().ConfigMaps(ns)
	var mu sync.Mutex
	var acks []write
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range perWorker {
				name := fmt.Sprintf("w%d-%d", w, i)
				obj, err := c.Create(ctx, cm(ns, name, map[string]string{"v": "0"}), metav1.CreateOptions{})
				if err != nil {
					errs <- fmt.Errorf("create %s: %w", name, err)
					return
				}
				got := []write{{watch.Added, name, obj.ResourceVersion}}
				obj.Data["v"] = "1"
				obj, err = c.Update(ctx, obj, metav1.UpdateOptions{})
				if err != nil {
					errs <- fmt.Errorf("update %s: %w", name, err)
					return
				}
				got = append(got, write{watch.Modified, name, obj.ResourceVersion})
				if i%3 == 0 {
					if err := c.Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
						errs <- fmt.Errorf("delete %s: %w", name, err)
						return
					}
					got = append(got, write{watch.Deleted, name, ""})
				}
				mu.Lock()
				acks = append(acks, got...)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		return acks, err
	}
	return acks, nil
}

// testWatchResume watches configmaps of a namespace from a list's
// resourceVersion while writers run, stops the watch every few events and
// resumes from the last seen resourceVersion, then checks that the events are
// exactly the acknowledged writes: none lost, none duplicated, RVs increasing.
func testWatchResume(t *testing.T, s *testutil.Server) {
	ctx, cs := ctxT(t), s.Clientset
	ns := newNamespace(t, cs)
	c := cs.CoreV1().ConfigMaps(ns)
	list, err := c.List(ctx, metav1.ListOptions{})
	must(t, err, "list")
	const workers, per = 6, 15
	type result struct {
		acks []write
		err  error
	}
	done := make(chan result, 1)
	go func() {
		acks, err := concurrentWrites(t, s, ns, workers, per)
		done <- result{acks, err}
	}()

	want := workers * per * 2 // creates + updates
	want += workers * ((per + 2) / 3)
	var finished *result
	doneCh := done
	var events []write
	lastRV := list.ResourceVersion
	deadline := time.After(5 * time.Minute)
	for len(events) < want {
		w, err := c.Watch(ctx, metav1.ListOptions{ResourceVersion: lastRV, AllowWatchBookmarks: true})
		must(t, err, "watch from rv %s", lastRV)
		n := 0
		for n < 7 && len(events) < want {
			var ev watch.Event
			var ok bool
			select {
			case ev, ok = <-w.ResultChan():
			case r := <-doneCh:
				must(t, r.err, "writers")
				finished, doneCh = &r, nil
				continue
			case <-deadline:
				t.Fatalf("timed out with %d/%d events", len(events), want)
			}
			if !ok {
				break // server closed the watch: resume
			}
			if ev.Type == watch.Error {
				t.Fatalf("watch error event after rv %s: %v", lastRV, ev.Object)
			}
			obj := ev.Object.(*corev1.ConfigMap)
			if ev.Type == watch.Bookmark {
				lastRV = obj.ResourceVersion
				continue
			}
			events = append(events, write{ev.Type, obj.Name, obj.ResourceVersion})
			lastRV = obj.ResourceVersion
			n++
		}
		w.Stop()
	}
	if finished == nil {
		r := <-done
		finished = &r
	}
	must(t, finished.err, "writers")
	checkEvents(t, events, finished.acks)
}

func checkEvents(t *testing.T, events, acks []write) {
	t.Helper()
	var prev int64
	seen := map[string]bool{}
	for i, ev := range events {
		rv, err := strconv.ParseInt(ev.rv, 10, 64)
		if err != nil {
			t.Fatalf("event %d: resourceVersion %q is not an integer", i, ev.rv)
		}
		if rv <= prev {
			t.Fatalf("event %d (%s %s) rv %d not after previous %d: reordered or duplicated", i, ev.typ, ev.name, rv, prev)
		}
		prev = rv
		k := fmt.Sprintf("%s/%s/%s", ev.typ, ev.name, ev.rv)
		if ev.typ == watch.Deleted {
			k = fmt.Sprintf("%s/%s/", ev.typ, ev.name)
		}
		if seen[k] {
			t.Fatalf("duplicate event %s", k)
		}
		seen[k] = true
	}
	for _, a := range acks {
		k := fmt.Sprintf("%s/%s/%s", a.typ, a.name, a.rv)
		if !seen[k] {
			t.Errorf("acknowledged write %s never arrived on the watch", k)
		}
	}
	if len(events) != len(acks) {
		t.Errorf("%d events for %d acknowledged writes", len(events), len(acks))
	}
}

func testStaleUpdate(t *testing.T, s *testutil.Server) {
	ctx, cs := ctxT(t), s.Clientset
	ns := newNamespace(t, cs)
	c := cs.CoreV1().ConfigMaps(ns)
	v1, err := c.Create(ctx, cm(ns, "x", map[string]string{"k": "1"}), metav1.CreateOptions{})
	must(t, err, "create")
	v2 := v1.DeepCopy()
	v2.Data["k"] = "2"
	v2, err = c.Update(ctx, v2, metav1.UpdateOptions{})
	must(t, err, "update")
	v1.Data["k"] = "stale"
	_, err = c.Update(ctx, v1, metav1.UpdateOptions{})
	st := wantCode(t, err, 409, "update with stale resourceVersion")
	if st.Reason != metav1.StatusReasonConflict {
		t.Errorf("stale update reason %q, want Conflict", st.Reason)
	}
	got, err := c.Get(ctx, "x", metav1.GetOptions{})
	must(t, err, "get")
	if got.Data["k"] != "2" || got.ResourceVersion != v2.ResourceVersion {
		t.Fatalf("after rejected stale update: data %v rv %s, want k=2 rv %s", got.Data, got.ResourceVersion, v2.ResourceVersion)
	}
	// Unconditional update (no resourceVersion) is allowed for ConfigMaps.
	got.ResourceVersion = ""
	got.Data["k"] = "3"
	_, err = c.Update(ctx, got, metav1.UpdateOptions{})
	must(t, err, "update without resourceVersion")
	// Concurrent read-modify-write loops: exactly one winner per round.
	var wg sync.WaitGroup
	var mu sync.Mutex
	wins, conflicts := 0, 0
	base, err := c.Get(ctx, "x", metav1.GetOptions{})
	must(t, err, "get")
	for i := range 5 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			o := base.DeepCopy()
			o.Data["k"] = "concurrent-" + strconv.Itoa(i) // differs from base: no no-op update
			_, err := c.Update(ctx, o, metav1.UpdateOptions{})
			mu.Lock()
			defer mu.Unlock()
			switch st := statusOf(err); {
			case err == nil:
				wins++
			case st != nil && st.Code == 409:
				conflicts++
			default:
				t.Errorf("concurrent update: %v", err)
			}
		}()
	}
	wg.Wait()
	if wins != 1 || conflicts != 4 {
		t.Fatalf("5 concurrent updates from one resourceVersion: %d won, %d conflicted; want 1 and 4", wins, conflicts)
	}
}
