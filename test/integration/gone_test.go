package integration

import (
	"fmt"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/orch/orch/test/testutil"
)

// historyFlag returns extra server args that shrink the watch history, when
// `orch server --help` lists such a flag, and the number of writes needed to
// push a revision out of the history.
func historyFlag(t *testing.T) ([]string, int) {
	out, _ := exec.Command(testutil.Binary(t), "server", "--help").CombinedOutput()
	for _, f := range []string{"--default-watch-cache-size", "--watch-history", "--event-history", "--watch-cache-size"} {
		if strings.Contains(string(out), f+" ") || strings.Contains(string(out), f+"=") {
			t.Logf("using %s=50", f)
			return []string{f + "=50"}, 200
		}
	}
	t.Logf("no watch history flag in `orch server --help`; writing past the default ~1000-event history")
	return nil, 1300
}

// TestWatchTooOldResourceVersionIsGone writes more events than the watch
// history keeps and checks that a watch from the first revision answers 410.
func TestWatchTooOldResourceVersionIsGone(t *testing.T) {
	t.Parallel()
	args, writes := historyFlag(t)
	s := testutil.StartServer(t, testutil.Options{Quiet: true, ExtraArgs: args})
	ctx, cs := ctxT(t), s.Clientset
	ns := newNamespace(t, cs)
	c := cs.CoreV1().ConfigMaps(ns)
	first, err := c.Create(ctx, cm(ns, "first", nil), metav1.CreateOptions{})
	must(t, err, "create")
	oldRV := first.ResourceVersion
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			o, err := c.Create(ctx, cm(ns, fmt.Sprintf("w%d", w), map[string]string{"n": "0"}), metav1.CreateOptions{})
			if err != nil {
				errs <- err
				return
			}
			for i := range writes / 8 {
				o.Data["n"] = fmt.Sprint(i)
				if o, err = c.Update(ctx, o, metav1.UpdateOptions{}); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("write load: %v", err)
	}
	w, err := c.Watch(ctx, metav1.ListOptions{ResourceVersion: oldRV})
	if err != nil {
		wantCode(t, err, 410, "watch from a compacted resourceVersion")
		return
	}
	defer w.Stop()
	select {
	case ev, ok := <-w.ResultChan():
		if !ok {
			t.Fatalf("watch from compacted rv %s closed without an event", oldRV)
		}
		if ev.Type != watch.Error {
			t.Fatalf("watch from compacted rv %s: first event %s, want ERROR 410", oldRV, ev.Type)
		}
		st, ok := ev.Object.(*metav1.Status)
		if !ok || st.Code != 410 || st.Reason != metav1.StatusReasonExpired && st.Reason != metav1.StatusReasonGone {
			t.Fatalf("watch error event %+v, want Status 410 Expired/Gone", ev.Object)
		}
	case <-time.After(time.Minute):
		t.Fatalf("no event within a minute on a watch from compacted rv %s", oldRV)
	}
	// A watch from a recent rv still works.
	l, err := c.List(ctx, metav1.ListOptions{})
	must(t, err, "list")
	w2, err := c.Watch(ctx, metav1.ListOptions{ResourceVersion: l.ResourceVersion})
	must(t, err, "watch from current rv")
	defer w2.Stop()
	_, err = c.Create(ctx, cm(ns, "last", nil), metav1.CreateOptions{})
	must(t, err, "create")
	select {
	case ev := <-w2.ResultChan():
		if ev.Type != watch.Added {
			t.Fatalf("event %s %v, want ADDED last", ev.Type, ev.Object)
		}
	case <-time.After(time.Minute):
		t.Fatal("no event for a create on a fresh watch")
	}
}
