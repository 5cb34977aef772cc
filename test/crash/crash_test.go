package crash

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/orch/orch/test/testutil"
)

func TestMain(m *testing.M) { testutil.Main(m) }

const (
	workers = 16
	ns      = "crash"
)

// ledger records what the server acknowledged.
type ledger struct {
	mu       sync.Mutex
	created  map[string]string // name -> payload
	counters map[string]int    // counter name -> last acknowledged value
	maxRV    int64
}

func (l *ledger) ackCreate(name, payload, rv string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.created[name] = payload
	l.seeRV(rv)
}

func (l *ledger) ackCounter(name string, v int, rv string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.counters[name] = v
	l.seeRV(rv)
}

func (l *ledger) seeRV(rv string) {
	n, _ := strconv.ParseInt(rv, 10, 64)
	l.maxRV = max(l.maxRV, n)
}

func (l *ledger) count() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.created)
}

func sum(payload string) string {
	h := sha256.Sum256([]byte(payload))
	return hex.EncodeToString(h[:])
}

func payloadCM(name string) (*corev1.ConfigMap, string) {
	b := make([]byte, 256+rand.IntN(2048))
	for i := range b {
		b[i] = byte('a' + rand.IntN(26))
	}
	p := string(b)
	return &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: map[string]string{"kind": "payload"}},
		Data:       map[string]string{"payload": p, "sum": sum(p)},
	}, p
}

// TestCrashLosesNoAcknowledgedWrite runs rounds of: concurrent creates and
// counter updates, SIGKILL after some acks while requests are in flight,
// restart, verify.
func TestCrashLosesNoAcknowledgedWrite(t *testing.T) {
	rounds := 3
	if v, err := strconv.Atoi(os.Getenv("ORCH_CRASH_ROUNDS")); err == nil && v > 0 {
		rounds = v
	}
	s := testutil.StartServer(t, testutil.Options{Quiet: true})
	ctx := context.Background()
	_, err := s.Clientset.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create namespace: %v", err)
	}
	l := &ledger{created: map[string]string{}, counters: map[string]int{}}
	for w := range workers {
		name := fmt.Sprintf("counter-%d", w)
		o, err := s.Clientset.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"kind": "counter"}},
			Data:       map[string]string{"n": "0"},
		}, metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("create %s: %v", name, err)
		}
		l.ackCounter(name, 0, o.ResourceVersion)
	}
	for round := range rounds {
		killAfter := l.count() + 100 + rand.IntN(150)
		inflight := load(t, s, l, round, killAfter)
		t.Logf("round %d: killed with %d creates acknowledged in total, %d requests in flight", round, l.count(), inflight)
		s.Restart()
		verify(t, s.Clientset, l)
		if t.Failed() {
			t.Logf("--- server output (tail) ---\n%s", s.Output())
			return
		}
	}
}

// load writes from several goroutines until killAfter creates are
// acknowledged, then SIGKILLs the server and returns how many requests were
// in flight at the kill.
func load(t *testing.T, s *testutil.Server, l *ledger, round, killAfter int) int {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cs := s.Clientset
	var inflight sync.WaitGroup
	var mu sync.Mutex
	pending := 0
	track := func(d int) {
		mu.Lock()
		pending += d
		mu.Unlock()
	}
	reached := make(chan struct{})
	var once sync.Once
	for w := range workers {
		inflight.Add(1)
		go func() {
			defer inflight.Done()
			counter := fmt.Sprintf("counter-%d", w)
			for i := 0; ctx.Err() == nil; i++ {
				name := fmt.Sprintf("r%d-w%d-%d", round, w, i)
				obj, payload := payloadCM(name)
				track(1)
				out, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, obj, metav1.CreateOptions{})
				track(-1)
				if err != nil {
					return
				}
				l.ackCreate(name, payload, out.ResourceVersion)
				if l.count() >= killAfter {
					once.Do(func() { close(reached) })
				}
				if i%4 == 0 && !bumpCounter(ctx, cs, l, counter, track) {
					return
				}
			}
		}()
	}
	select {
	case <-reached:
	case <-time.After(5 * time.Minute):
		t.Fatalf("round %d: only %d creates acknowledged in 5 minutes", round, l.count())
	}
	mu.Lock()
	n := pending
	mu.Unlock()
	s.Kill()
	cancel()
	inflight.Wait()
	return n
}

// bumpCounter increments a worker's counter with a compare-and-swap update.
func bumpCounter(ctx context.Context, cs kubernetes.Interface, l *ledger, name string, track func(int)) bool {
	c := cs.CoreV1().ConfigMaps(ns)
	cur, err := c.Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return false
	}
	n, _ := strconv.Atoi(cur.Data["n"])
	cur.Data["n"] = strconv.Itoa(n + 1)
	track(1)
	out, err := c.Update(ctx, cur, metav1.UpdateOptions{})
	track(-1)
	if err != nil {
		return false
	}
	l.ackCounter(name, n+1, out.ResourceVersion)
	return true
}

// verify checks the restarted server against the ledger.
func verify(t *testing.T, cs kubernetes.Interface, l *ledger) {
	t.Helper()
	ctx := context.Background()
	l.mu.Lock()
	defer l.mu.Unlock()
	live := map[string]corev1.ConfigMap{}
	opts := metav1.ListOptions{Limit: 500}
	for {
		list, err := cs.CoreV1().ConfigMaps(ns).List(ctx, opts)
		if err != nil {
			t.Fatalf("list after restart (every stored object must decode): %v", err)
		}
		for _, o := range list.Items {
			live[o.Name] = o
		}
		if list.Continue == "" {
			break
		}
		opts.Continue = list.Continue
	}
	lost := 0
	for name, payload := range l.created {
		o, ok := live[name]
		switch {
		case !ok:
			lost++
			if lost <= 10 {
				t.Errorf("acknowledged create %s lost after SIGKILL", name)
			}
		case o.Data["payload"] != payload || o.Data["sum"] != sum(payload):
			t.Errorf("acknowledged create %s came back with other content (len %d, sum ok %v)",
				name, len(o.Data["payload"]), o.Data["sum"] == sum(o.Data["payload"]))
		}
	}
	if lost > 0 {
		t.Errorf("%d of %d acknowledged creates lost", lost, len(l.created))
	}
	extra := 0
	for name, o := range live {
		if o.Labels["kind"] == "payload" {
			if o.Data["sum"] != sum(o.Data["payload"]) || o.UID == "" || o.ResourceVersion == "" {
				t.Errorf("object %s is not whole: sum ok %v uid %q rv %q", name, o.Data["sum"] == sum(o.Data["payload"]), o.UID, o.ResourceVersion)
			}
			if _, acked := l.created[name]; !acked {
				extra++ // in flight at the kill: committed but never acknowledged; fine
				l.created[name] = o.Data["payload"]
			}
		}
	}
	for name, v := range l.counters {
		got, _ := strconv.Atoi(live[name].Data["n"])
		if got < v || got > v+1 {
			t.Errorf("counter %s = %d after restart; last acknowledged %d (only +1 from an in-flight update is allowed)", name, got, v)
		}
		l.counters[name] = got
	}
	t.Logf("verified %d acknowledged creates (+%d committed while in flight), %d counters", len(l.created)-extra, extra, len(l.counters))
	o, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{
		Name: fmt.Sprintf("after-restart-%d", rand.IntN(1<<30))}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("write after restart: %v", err)
	}
	if rv, _ := strconv.ParseInt(o.ResourceVersion, 10, 64); rv <= l.maxRV {
		t.Errorf("resourceVersion after restart %d is not above the highest acknowledged %d", rv, l.maxRV)
	}
}
