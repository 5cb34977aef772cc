package main

import (
	"context"
	"flag"
	"fmt"
	"strings"
	"syscall"
	"time"

	"go.uber.org/zap"
	"k8s.io/client-go/rest"

	"github.com/orch/orch/tools/bench/internal/load"
	"github.com/orch/orch/tools/bench/internal/report"
)

// levelHook is called before a create level; the returned func after it.
type levelHook func(clients int) func()

// cpuFunc returns the CPU seconds used so far by the server under test.
type cpuFunc func() (float64, error)

// selfCPU returns this process's user+system CPU seconds.
func selfCPU() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	tv := func(t syscall.Timeval) float64 { return float64(t.Sec) + float64(t.Usec)/1e6 }
	return tv(ru.Utime) + tv(ru.Stime)
}

// runLoad runs the create levels then the watch test against the endpoints
// (clients spread round-robin over them), appending errors.
func runLoad(ctx context.Context, log *zap.Logger, endpoints []*rest.Config, p *params, hook levelHook, serverCPU cpuFunc, errs []string) ([]load.CreateResult, *load.WatchResult, []string) {
	tag := time.Now().Format("150405")
	var creates []load.CreateResult
	for _, n := range p.levels {
		if ctx.Err() != nil {
			return creates, nil, append(errs, "interrupted")
		}
		log.Info("create level", zap.Int("clients", n), zap.Duration("duration", p.duration))
		after := func() {}
		if hook != nil {
			after = hook(n)
		}
		srv0, cli0 := cpuOf(serverCPU), selfCPU()
		res, err := load.RunCreate(ctx, endpoints, load.CreateSpec{
			Namespace: p.namespace, Clients: n, Duration: p.duration, Payload: p.payload,
			Prefix: fmt.Sprintf("bench-%s-c%d", tag, n),
		})
		if secs := res.Elapsed.Seconds(); secs > 0 {
			res.ServerCores = (cpuOf(serverCPU) - srv0) / secs
			res.ClientCores = (selfCPU() - cli0) / secs
		}
		after()
		if err != nil {
			errs = append(errs, fmt.Sprintf("create level %d: %v", n, err))
			continue
		}
		log.Info("create level done", zap.Int("clients", n), zap.Float64("per_s", res.PerSecond),
			zap.Int("ok", res.OK), zap.Int("errors", res.Errors), zap.Duration("p50", res.Latency.P50),
			zap.Duration("p99", res.Latency.P99), zap.String("first_error", res.FirstErr),
			zap.Float64("server_cores", res.ServerCores), zap.Float64("client_cores", res.ClientCores))
		if res.FirstErr != "" {
			errs = append(errs, fmt.Sprintf("create level %d: %d errors, first: %s", n, res.Errors, res.FirstErr))
		}
		creates = append(creates, res)
	}
	if ctx.Err() != nil {
		return creates, nil, append(errs, "interrupted")
	}
	log.Info("watch test", zap.Int("watchers", p.watchers), zap.Int("writes", p.watchWrites))
	w, err := load.RunWatch(ctx, endpoints, load.WatchSpec{
		Namespace: p.namespace, Watchers: p.watchers, Writes: p.watchWrites, Interval: p.watchInterval,
		Payload: p.payload, Prefix: "bench-" + tag + "-watch", Timeout: 60 * time.Second,
	})
	if err != nil {
		errs = append(errs, fmt.Sprintf("watch: %v", err))
		return creates, nil, errs
	}
	log.Info("watch done", zap.Int("received", w.Received), zap.Int("expected", w.Expected),
		zap.Duration("p50", w.Latency.P50), zap.Duration("p99", w.Latency.P99))
	return creates, &w, errs
}

// loadCmd drives an already running server given its kubeconfig.
func loadCmd(ctx context.Context, log *zap.Logger, args []string) error {
	var p params
	fs := flag.NewFlagSet("load", flag.ContinueOnError)
	levels := p.register(fs)
	kubeconfig := fs.String("kubeconfig", "", "admin kubeconfig of the server (loopback only); several, comma separated, spread the clients round-robin over those servers")
	name := fs.String("name", "server", "label for the report column")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if err := p.parseLevels(*levels); err != nil {
		return err
	}
	endpoints, err := loadConfigs(strings.Split(*kubeconfig, ","))
	if err != nil {
		return err
	}
	t := &report.Target{Name: *name}
	t.Creates, t.Watch, t.Errors = runLoad(ctx, log, endpoints, &p, nil, nil, nil)
	return write(&report.Run{Started: time.Now(), Params: p.String(), Targets: []*report.Target{t}}, "", "")
}

// loadConfigs loads one client config per kubeconfig.
func loadConfigs(kubeconfigs []string) ([]*rest.Config, error) {
	var out []*rest.Config
	for _, k := range kubeconfigs {
		cfg, err := load.LoadConfig(k)
		if err != nil {
			return nil, err
		}
		out = append(out, cfg)
	}
	return out, nil
}

func cpuOf(f cpuFunc) float64 {
	if f == nil {
		return 0
	}
	v, err := f()
	if err != nil {
		return 0
	}
	return v
}
