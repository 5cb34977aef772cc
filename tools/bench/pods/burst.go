package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	containerd "github.com/containerd/containerd/v2/client"
	"github.com/containerd/containerd/v2/pkg/namespaces"
	"go.uber.org/zap"

	orchrt "github.com/orch/orch/agent/runtime"
)

// burstResult is one burst: Pods created at once, the time from the first
// create request until the last of them was Running and Ready, and the
// node process's CPU seconds meanwhile.
type burstResult struct {
	Pods     int
	AllReady time.Duration
	CPU      float64
	// Baseline is containerd alone starting as many containers at once
	// (NewContainer + NewTask + Start each, no pod network or volumes).
	Baseline time.Duration `json:",omitempty"`
}

// burstPhase creates each level's pods at once (one client goroutine per
// pod), times them to all Ready, then deletes them and waits until they
// are gone before the next level.
func (e *env) burstPhase(ctx context.Context, log *zap.Logger, f *flags, res *results) error {
	for _, n := range f.bursts {
		stopProfile := e.profileCPU(ctx, log, f.profileDir, fmt.Sprintf("burst-%d", n), 10*time.Second)
		cpu0 := e.nodeCPU()
		d, err := e.burst(ctx, n, f.podTimeout)
		cpu := e.nodeCPU() - cpu0
		stopProfile()
		if err != nil {
			return err
		}
		if err := deletePods(ctx, e.cs, "burst="+strconv.Itoa(n), 3*time.Minute); err != nil {
			return err
		}
		if err := e.waitContainersGone(ctx, "burst"); err != nil {
			return err
		}
		base, err := e.base.burst(n)
		if err != nil {
			return fmt.Errorf("containerd burst of %d: %w", n, err)
		}
		log.Info("burst", zap.Int("pods", n), zap.Duration("all_ready", d), zap.Float64("cpu_s", cpu), zap.Duration("containerd", base))
		res.Bursts = append(res.Bursts, burstResult{Pods: n, AllReady: d, CPU: cpu, Baseline: base})
	}
	return nil
}

// waitContainersGone waits until the agent has removed the containers of
// every pod whose name starts with prefix: the API objects go first, the
// agent tears the sandboxes down after, and the next phase should time a
// node at rest.
func (e *env) waitContainersGone(ctx context.Context, prefix string) error {
	client, err := containerd.New(e.containerdSock())
	if err != nil {
		return err
	}
	defer client.Close()
	nctx := namespaces.WithNamespace(ctx, e.ns)
	filter := fmt.Sprintf(`labels.%q~=%q`, orchrt.LabelPodName, "^"+prefix)
	return waitFor(ctx, 3*time.Minute, "the agent to remove the "+prefix+" pods' containers", func() (bool, error) {
		cs, err := client.Containers(nctx, filter)
		if err != nil {
			return false, err
		}
		return len(cs) == 0, fmt.Errorf("%d containers left", len(cs))
	})
}

func (e *env) burst(ctx context.Context, n int, timeout time.Duration) (time.Duration, error) {
	pods := make([]chan time.Time, n)
	for i := range pods {
		pods[i] = e.pw.expect(fmt.Sprintf("burst%d-%03d", n, i))
	}
	errs := make(chan error, n)
	var wg sync.WaitGroup
	t0 := time.Now()
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p := benchPod(fmt.Sprintf("burst%d-%03d", n, i), e.node)
			p.Labels["burst"] = strconv.Itoa(n)
			errs <- createPod(ctx, e.cs, p)
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			return 0, err
		}
	}
	var last time.Time
	deadline := time.After(timeout)
	for i, c := range pods {
		select {
		case t := <-c:
			last = maxTime(last, t)
		case <-deadline:
			return 0, fmt.Errorf("burst of %d: pod %d not Running and Ready after %v", n, i, timeout)
		case <-ctx.Done():
			return 0, ctx.Err()
		}
	}
	return last.Sub(t0), nil
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// nodeCPU is the CPU seconds of the processes that run the node (server
// and agent).
func (e *env) nodeCPU() float64 {
	c := e.cpu()
	return c.Server + c.Agent
}

// profileCPU starts a CPU profile of the server through its
// --pprof-address (when both that and dir are set) and returns the stop:
// the profile covers d (whole seconds) from now, written to
// dir/<name>.pprof.
func (e *env) profileCPU(ctx context.Context, log *zap.Logger, dir, name string, d time.Duration) (stop func()) {
	if dir == "" || e.pprofAddr == "" {
		return func() {}
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		url := fmt.Sprintf("http://%s/debug/pprof/profile?seconds=%d", e.pprofAddr, max(1, int(d/time.Second)))
		if err := fetchTo(ctx, url, filepath.Join(dir, name+".pprof")); err != nil {
			log.Warn("CPU profile", zap.String("name", name), zap.Error(err))
		}
	}()
	time.Sleep(100 * time.Millisecond) // the profile has started
	return func() { <-done }
}

// saveHeap writes the server's heap profile (binary and text) and its
// goroutines into dir.
func (e *env) saveHeap(ctx context.Context, dir string) error {
	if err := fetchTo(ctx, "http://"+e.pprofAddr+"/debug/pprof/heap", filepath.Join(dir, "idle-heap.pprof")); err != nil {
		return err
	}
	// debug=1 ends with the runtime's MemStats (heap, stacks, GC target).
	if err := fetchTo(ctx, "http://"+e.pprofAddr+"/debug/pprof/heap?debug=1", filepath.Join(dir, "idle-heap.txt")); err != nil {
		return err
	}
	return fetchTo(ctx, "http://"+e.pprofAddr+"/debug/pprof/goroutine?debug=1", filepath.Join(dir, "idle-goroutines.txt"))
}

func fetchTo(ctx context.Context, url, path string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	out, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, resp.Body); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// parseInts parses "30,100" (empty: none).
func parseInts(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		n, err := strconv.Atoi(f)
		if err != nil || n <= 0 {
			return nil, fmt.Errorf("bad count %q", f)
		}
		out = append(out, n)
	}
	return out, nil
}
