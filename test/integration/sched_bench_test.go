package integration

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"

	"github.com/orch/orch/test/testutil"
)

// BenchmarkSchedAPI measures scheduling end to end through the API: a real
// `orch server --disable-agent`, 1,000 API-only Nodes (Ready), then N pods
// (ORCH_SCHED_BENCH_PODS, default 2000) created by 16 client-go workers;
// pods/s is N over the time from the first create until a watch has seen
// every pod bound. Run with -benchtime 1x (each iteration is a fresh
// server). The pods tolerate every taint, so the node lifecycle
// controller marking the Lease-less nodes unreachable after 40 s does not
// stop long runs.
func BenchmarkSchedAPI(b *testing.B) {
	numPods := 2000
	if v, err := strconv.Atoi(os.Getenv("ORCH_SCHED_BENCH_PODS")); err == nil && v > 0 {
		numPods = v
	}
	const numNodes, workers = 1000, 16
	var bound, created time.Duration
	for range b.N {
		b.StopTimer()
		s := testutil.StartServer(b, testutil.Options{Quiet: true})
		schedBenchNodes(b, s.Clientset, numNodes, workers)
		b.StartTimer()
		c, bd := schedBenchPods(b, s.Clientset, numPods, workers)
		b.StopTimer()
		created += c
		bound += bd
	}
	b.ReportMetric(float64(numPods*b.N)/bound.Seconds(), "pods/s")
	b.ReportMetric(float64(numPods*b.N)/created.Seconds(), "creates/s")
}

// schedParallel runs fn(i) for i in [0,n) on workers goroutines.
func schedParallel(n, workers int, fn func(i int) error) error {
	var next atomic.Int64
	var first error
	var once sync.Once
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int(next.Add(1) - 1); i < n; i = int(next.Add(1) - 1) {
				if err := fn(i); err != nil {
					once.Do(func() { first = err })
					return
				}
			}
		}()
	}
	wg.Wait()
	return first
}

func schedBenchNodes(b *testing.B, cs kubernetes.Interface, n, workers int) {
	rl := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("32"), corev1.ResourceMemory: resource.MustParse("256Gi"),
		corev1.ResourcePods: resource.MustParse("110")}
	err := schedParallel(n, workers, func(i int) error {
		name := fmt.Sprintf("bench-node-%04d", i)
		node := &corev1.Node{
			ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{corev1.LabelHostname: name,
				corev1.LabelTopologyZone: fmt.Sprintf("zone-%d", i%10)}},
			Status: corev1.NodeStatus{Capacity: rl, Allocatable: rl, Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady,
				Status: corev1.ConditionTrue, Reason: "KubeletReady", LastHeartbeatTime: metav1.Now()}}},
		}
		_, err := cs.CoreV1().Nodes().Create(context.Background(), node, metav1.CreateOptions{})
		return err
	})
	if err != nil {
		b.Fatalf("creating nodes: %v", err)
	}
}

// schedBenchPods creates n pods and returns the time until all were
// created and until all were bound.
func schedBenchPods(b *testing.B, cs kubernetes.Interface, n, workers int) (time.Duration, time.Duration) {
	ctx := context.Background()
	const ns = "default"
	w, err := cs.CoreV1().Pods(ns).Watch(ctx, metav1.ListOptions{})
	if err != nil {
		b.Fatal(err)
	}
	defer func() { w.Stop() }()
	start := time.Now()
	err = schedParallel(n, workers, func(i int) error {
		p := schedPod(ns, fmt.Sprintf("bench-%05d", i), "", "100m", map[string]string{"app": "bench"})
		p.Spec.NodeSelector = nil
		// Tolerate the node lifecycle controller's taints: fake nodes have
		// no Lease and go unreachable after its grace period (40 s).
		p.Spec.Tolerations = []corev1.Toleration{{Operator: corev1.TolerationOpExists}}
		_, err := cs.CoreV1().Pods(ns).Create(ctx, p, metav1.CreateOptions{})
		return err
	})
	if err != nil {
		b.Fatalf("creating pods: %v", err)
	}
	created := time.Since(start)
	seen := map[string]bool{}
	timeout := time.After(10 * time.Minute)
	for len(seen) < n {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok { // the server ended the watch: catch up by a list, watch again
				w = schedRewatch(b, cs, ns, seen)
				continue
			}
			if p, isPod := ev.Object.(*corev1.Pod); isPod && ev.Type != watch.Deleted && p.Spec.NodeName != "" {
				seen[p.Name] = true
			}
		case <-timeout:
			b.Fatalf("only %d of %d pods bound", len(seen), n)
		}
	}
	return created, time.Since(start)
}

// schedRewatch records the bound pods of a fresh list in seen and watches
// from the list's resourceVersion.
func schedRewatch(b *testing.B, cs kubernetes.Interface, ns string, seen map[string]bool) watch.Interface {
	list, err := cs.CoreV1().Pods(ns).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		b.Fatal(err)
	}
	for _, p := range list.Items {
		if p.Spec.NodeName != "" {
			seen[p.Name] = true
		}
	}
	w, err := cs.CoreV1().Pods(ns).Watch(context.Background(), metav1.ListOptions{ResourceVersion: list.ResourceVersion})
	if err != nil {
		b.Fatal(err)
	}
	return w
}
