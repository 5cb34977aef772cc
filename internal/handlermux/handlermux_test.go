package handlermux

import (
	"context"
	"fmt"
	"reflect"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/cache"
)

// recorder records the names a handler saw, per kind of event.
type recorder struct {
	mu                     sync.Mutex
	adds, updates, deletes []string
}

func (r *recorder) OnAdd(obj any, _ bool) { r.rec(&r.adds, obj) }
func (r *recorder) OnUpdate(_, obj any)   { r.rec(&r.updates, obj) }
func (r *recorder) OnDelete(obj any)      { r.rec(&r.deletes, obj) }

func (r *recorder) rec(to *[]string, obj any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	*to = append(*to, obj.(*corev1.ConfigMap).Name)
}

func (r *recorder) counts() [3]int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return [3]int{len(r.adds), len(r.updates), len(r.deletes)}
}

func waitCounts(t *testing.T, name string, r *recorder, want [3]int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for r.counts() != want {
		if time.Now().After(deadline) {
			t.Fatalf("%s saw (adds, updates, deletes) %v, want %v", name, r.counts(), want)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func cm(name, v string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns"}, Data: map[string]string{"v": v}}
}

func TestEarlyHandlersShareLateOnesReplay(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	client := fake.NewClientset(cm("a", "1"), cm("b", "1"))
	f := Wrap(informers.NewSharedInformerFactory(client, 0), "", nil)
	inf := f.Core().V1().ConfigMaps().Informer()
	g, err := f.ForResource(corev1.SchemeGroupVersion.WithResource("configmaps"))
	if err != nil {
		t.Fatal(err)
	}
	if len(f.wrapped) != 1 {
		t.Fatalf("ForResource and the typed accessor made %d muxes of one informer", len(f.wrapped))
	}
	cmType, secretsGVR := reflect.TypeOf(&corev1.ConfigMap{}), corev1.SchemeGroupVersion.WithResource("secrets")
	if !f.Has(corev1.SchemeGroupVersion.WithResource("configmaps"), nil) || !f.Has(secretsGVR, cmType) || f.Has(secretsGVR, nil) {
		t.Error("Has does not report what was asked for")
	}
	early1, early2, resync := &recorder{}, &recorder{}, &recorder{}
	reg1, _ := inf.AddEventHandler(early1)
	reg2, _ := g.Informer().AddEventHandler(early2)
	if _, err := inf.AddEventHandlerWithResyncPeriod(resync, time.Hour); err != nil {
		t.Fatal(err)
	}
	if n := f.Handlers(); n != 2 {
		t.Fatalf("%d handlers share the listener, want the 2 early ones (not the resyncing one)", n)
	}
	f.StartWithContext(ctx)
	if !cache.WaitForCacheSync(ctx.Done(), reg1.HasSynced, reg2.HasSynced) {
		t.Fatal("registrations did not sync")
	}
	waitCounts(t, "early1", early1, [3]int{2, 0, 0})
	waitCounts(t, "early2", early2, [3]int{2, 0, 0})
	waitCounts(t, "resync", resync, [3]int{2, 0, 0})

	late := &recorder{}
	lateReg, _ := inf.AddEventHandler(late)
	if f.Handlers() != 2 {
		t.Fatal("a handler added after the first delivery joined the shared listener")
	}
	waitCounts(t, "late (replay)", late, [3]int{2, 0, 0})
	if !cache.WaitForCacheSync(ctx.Done(), lateReg.HasSynced) {
		t.Fatal("late registration did not sync")
	}

	cms := client.CoreV1().ConfigMaps("ns")
	if _, err := cms.Update(ctx, cm("a", "2"), metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	for name, r := range map[string]*recorder{"early1": early1, "early2": early2, "late": late} {
		waitCounts(t, name, r, [3]int{2, 1, 0})
	}
	if err := inf.RemoveEventHandler(reg2); err != nil {
		t.Fatal(err)
	}
	if err := inf.RemoveEventHandler(reg2); err == nil {
		t.Error("removing a handler twice succeeded")
	}
	if err := cms.Delete(ctx, "b", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitCounts(t, "early1", early1, [3]int{2, 1, 1})
	waitCounts(t, "late", late, [3]int{2, 1, 1})
	if got := early2.counts(); got != [3]int{2, 1, 0} {
		t.Errorf("a removed handler saw %v", got)
	}
}

// TestHandlerAddedAfterStartBeforeDelivery: an informer started with
// nothing to deliver still shares its listener with a handler added later.
func TestHandlerAddedAfterStartBeforeDelivery(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	client := fake.NewClientset()
	f := Wrap(informers.NewSharedInformerFactory(client, 0), "", nil)
	inf := f.Core().V1().ConfigMaps().Informer()
	f.StartWithContext(ctx)
	cache.WaitForCacheSync(ctx.Done(), inf.HasSynced)
	r := &recorder{}
	reg, _ := inf.AddEventHandler(r)
	if !cache.WaitForCacheSync(ctx.Done(), reg.HasSynced) {
		t.Fatal("registration did not sync")
	}
	if _, err := client.CoreV1().ConfigMaps("ns").Create(ctx, cm("a", "1"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitCounts(t, "handler", r, [3]int{1, 0, 0})
	if f.Handlers() != 1 {
		t.Errorf("%d shared handlers, want 1", f.Handlers())
	}
}

// TestWrapperOfAWrapperCloses: a term's wrapper of a longer-lived Factory
// shares its informers, sees what they cached before it came, and takes
// its handlers back on Close while the informers run on for the others.
func TestWrapperOfAWrapperCloses(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	client := fake.NewClientset(cm("a", "1"))
	base := Wrap(informers.NewSharedInformerFactory(client, 0), "", nil)
	keeper := &recorder{}
	if _, err := base.Core().V1().ConfigMaps().Informer().AddEventHandler(keeper); err != nil {
		t.Fatal(err)
	}
	base.StartWithContext(ctx)
	waitCounts(t, "keeper", keeper, [3]int{1, 0, 0})

	secretsGVR := corev1.SchemeGroupVersion.WithResource("secrets")
	for term := 1; term <= 2; term++ {
		f := Wrap(base, "", nil)
		if !f.Has(corev1.SchemeGroupVersion.WithResource("configmaps"), reflect.TypeOf(&corev1.ConfigMap{})) || f.Has(secretsGVR, nil) {
			t.Fatalf("term %d: Has does not report the parent's informers", term)
		}
		inf := f.Core().V1().ConfigMaps().Informer()
		if inf.GetIndexer() != base.Core().V1().ConfigMaps().Informer().GetIndexer() {
			t.Fatalf("term %d: not the parent's informer", term)
		}
		early, late, resync := &recorder{}, &recorder{}, &recorder{}
		if _, err := inf.AddEventHandler(early); err != nil {
			t.Fatal(err)
		}
		if _, err := inf.AddEventHandlerWithResyncPeriod(resync, time.Hour); err != nil {
			t.Fatal(err)
		}
		replay := [3]int{term, 0, 0} // "a" and the b<i> of earlier terms
		waitCounts(t, "early (replay)", early, replay)
		if _, err := inf.AddEventHandler(late); err != nil {
			t.Fatal(err)
		}
		waitCounts(t, "late (replay)", late, replay)
		waitCounts(t, "resync (replay)", resync, replay)
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
		name := fmt.Sprintf("b%d", term)
		if _, err := client.CoreV1().ConfigMaps("ns").Create(ctx, cm(name, "1"), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		waitCounts(t, "keeper", keeper, [3]int{1 + term, 0, 0})
		time.Sleep(50 * time.Millisecond)
		for n, r := range map[string]*recorder{"early": early, "late": late, "resync": resync} {
			if got := r.counts(); got != replay {
				t.Errorf("term %d: %s saw %v after Close", term, n, got)
			}
		}
		if _, err := inf.AddEventHandler(&recorder{}); err != nil || f.Handlers() != 0 {
			t.Errorf("term %d: a handler added after Close joined a closed fan-out (err %v)", term, err)
		}
		_ = f.Close()
	}
}

// Parts of a process share one watch per type through Views: a part that
// starts later starts what it added, a part's context and Shutdown do not
// end the watch (its handlers go), and Stop ends it.
func TestSharedViewsOneWatch(t *testing.T) {
	client := fake.NewClientset(cm("a", "1"))
	shared := NewShared(Wrap(informers.NewSharedInformerFactory(client, 0), "", nil))
	first, second := shared.View(), shared.View()
	r1, r2 := &recorder{}, &recorder{}
	if _, err := first.Core().V1().ConfigMaps().Informer().AddEventHandler(r1); err != nil {
		t.Fatal(err)
	}
	partCtx, partCancel := context.WithCancel(context.Background())
	first.StartWithContext(partCtx)
	if !cache.WaitForCacheSync(partCtx.Done(), first.Core().V1().ConfigMaps().Informer().HasSynced) {
		t.Fatal("first part: not synced")
	}
	if _, err := second.Core().V1().ConfigMaps().Informer().AddEventHandler(r2); err != nil {
		t.Fatal(err)
	}
	second.Core().V1().Secrets().Informer() // added after the first start
	second.StartWithContext(context.Background())
	for typ, ok := range second.WaitForCacheSync(nil) {
		if !ok {
			t.Fatalf("second part: %v not synced", typ)
		}
	}
	waitCounts(t, "second (replay)", r2, [3]int{1, 0, 0})

	partCancel() // the first part ends
	first.Shutdown()
	if _, err := client.CoreV1().ConfigMaps("ns").Create(context.Background(), cm("b", "1"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitCounts(t, "second", r2, [3]int{2, 0, 0})
	if got := r1.counts(); got != [3]int{1, 0, 0} {
		t.Errorf("first part's handler after its Shutdown saw %v", got)
	}
	watches := 0
	for _, a := range client.Actions() {
		if a.GetVerb() == "watch" && a.GetResource().Resource == "configmaps" {
			watches++
		}
	}
	if watches != 1 {
		t.Errorf("configmaps watched %d times, want 1", watches)
	}
	shared.Stop()
	select {
	case <-shared.Done():
	default:
		t.Error("Done not closed after Stop")
	}
}
