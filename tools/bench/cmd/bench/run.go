package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/orch/orch/tools/bench/internal/report"
	"github.com/orch/orch/tools/bench/internal/servers"
)

type runFlags struct {
	params
	orch, kubeAPIServer, kine string
	workDir, outJSON, outMD   string
	idle                      time.Duration
	machine                   string
	keepLogs                  string
	perfOut                   string
	pprofOut                  string
	datastoreTest             string
	orchTargets               []orchTarget
}

func runCmd(ctx context.Context, log *zap.Logger, args []string) error {
	var f runFlags
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	levels := f.register(fs)
	fs.StringVar(&f.orch, "orch", "", "orch binary (empty: skip orch)")
	fs.StringVar(&f.kubeAPIServer, "kube-apiserver", "", "kube-apiserver binary (empty: skip baseline)")
	fs.StringVar(&f.kine, "kine", "", "kine binary")
	fs.StringVar(&f.workDir, "work-dir", "", "scratch directory (required; the caller removes it)")
	fs.StringVar(&f.outJSON, "out-json", "", "write results as JSON here")
	fs.StringVar(&f.outMD, "out-md", "", "write the Markdown table here")
	fs.DurationVar(&f.idle, "idle", 60*time.Second, "idle time before measuring RSS")
	fs.StringVar(&f.machine, "machine", "", "machine description for the report")
	fs.StringVar(&f.keepLogs, "keep-logs", "", "copy server logs into this directory")
	fs.StringVar(&f.datastoreTest, "datastore-test", "", "the datastore package's test binary (go test -c ./datastore): measure the store alone at the same levels (empty: skip)")
	fs.StringVar(&f.pprofOut, "pprof-out", "", "fetch a Go CPU profile of orch (its --pprof-address) during the largest create level into this file")
	fs.StringVar(&f.perfOut, "perf-out", "", "record perf CPU samples of orch during the largest create level into this file")
	orchTargets := fs.String("orch-targets", "orch", "orch setups to measure with --orch, comma separated: "+
		"orch (one server), orch-haN (N servers, clients round-robin over their API endpoints), "+
		"orch-haN-leader (N servers, every client on the Raft leader)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if err := f.parseLevels(*levels); err != nil {
		return err
	}
	var err error
	if f.orchTargets, err = parseOrchTargets(*orchTargets); err != nil {
		return err
	}
	if f.workDir == "" {
		return errors.New("--work-dir is required")
	}
	run := &report.Run{Started: time.Now(), Machine: f.machine, Params: f.params.String()}
	if f.orch != "" {
		for _, ot := range f.orchTargets {
			run.Targets = append(run.Targets, measure(ctx, log, &f, ot))
		}
	}
	if f.datastoreTest != "" {
		run.Targets = append(run.Targets, measureDatastore(ctx, log, &f))
	}
	if f.kubeAPIServer != "" {
		run.Targets = append(run.Targets, measure(ctx, log, &f, orchTarget{name: "baseline"}))
	}
	if err := write(run, f.outJSON, f.outMD); err != nil {
		return err
	}
	var failed []string
	for _, t := range run.Targets {
		if len(t.Errors) > 0 {
			failed = append(failed, t.Name)
		}
	}
	if len(failed) > 0 {
		return fmt.Errorf("errors measuring %v (see the report)", failed)
	}
	return nil
}

// measure starts one server (or cluster) in its own scratch dir, measures
// it and stops it.
func measure(ctx context.Context, log *zap.Logger, f *runFlags, target orchTarget) *report.Target {
	name := target.name
	t := &report.Target{Name: name, Setup: target.setup()}
	dir := filepath.Join(f.workDir, name)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Errors = append(t.Errors, err.Error())
		return t
	}
	log = log.With(zap.String("target", name))
	log.Info("starting server")
	var s *servers.Server
	var err error
	pprofAddr := ""
	if name == "orch" && f.pprofOut != "" {
		if pprofAddr, err = servers.PprofAddr(); err != nil {
			t.Errors = append(t.Errors, err.Error())
			return t
		}
	}
	s, err = startTarget(ctx, dir, f, target, pprofAddr)
	defer func() {
		if s != nil {
			if err := s.Stop(); err != nil {
				log.Warn("stop", zap.Error(err))
			}
		}
		keepLogs(log, dir, f.keepLogs, name)
	}()
	if err != nil {
		t.Errors = append(t.Errors, fmt.Sprintf("start: %v", err))
		return t
	}
	t.StartupToReady = s.Ready
	t.Version = servers.Version(s.Kubeconfig)
	log.Info("ready", zap.Duration("startup", s.Ready), zap.String("version", t.Version))
	measureIdle(ctx, log, s, t, f.idle)
	if ctx.Err() != nil {
		t.Errors = append(t.Errors, "interrupted")
		return t
	}
	if err := servers.EnsureNamespace(ctx, s.Kubeconfig, f.namespace, time.Minute); err != nil {
		t.Errors = append(t.Errors, err.Error())
		return t
	}
	var hook levelHook
	switch {
	case name == "orch" && f.pprofOut != "":
		hook = pprofHook(log, pprofAddr, f.pprofOut, slices.Max(f.levels), f.duration)
	case name == "orch" && f.perfOut != "":
		hook = perfHook(log, s, f.perfOut, slices.Max(f.levels))
	}
	endpoints, err := loadEndpoints(ctx, log, s, target, t)
	if err != nil {
		t.Errors = append(t.Errors, err.Error())
		return t
	}
	measureLoad(ctx, log, s, t, endpoints, &f.params, hook)
	if _, rss, err := s.RSSKiB(); err == nil {
		t.RSSAfterLoadKiB = rss
	}
	return t
}

// startTarget starts the target's server(s) in dir; a non-nil Server is
// returned also on error, to be stopped.
func startTarget(ctx context.Context, dir string, f *runFlags, target orchTarget, pprofAddr string) (*servers.Server, error) {
	switch {
	case target.name == "orch":
		return servers.StartOrch(ctx, dir, f.orch, pprofAddr)
	case target.servers > 1:
		return servers.StartOrchCluster(ctx, dir, f.orch, target.servers)
	default:
		return servers.StartBaseline(ctx, dir, servers.BaselineBins{KubeAPIServer: f.kubeAPIServer, Kine: f.kine})
	}
}

func measureIdle(ctx context.Context, log *zap.Logger, s *servers.Server, t *report.Target, idle time.Duration) {
	cpu0, err := s.CPUSeconds()
	if err != nil {
		t.Errors = append(t.Errors, err.Error())
		return
	}
	log.Info("idling", zap.Duration("for", idle))
	start := time.Now()
	select {
	case <-ctx.Done():
		return
	case <-time.After(idle):
	}
	if err := s.Alive(); err != nil {
		t.Errors = append(t.Errors, err.Error())
		return
	}
	cpu1, _ := s.CPUSeconds()
	t.IdleSeconds = time.Since(start).Seconds()
	t.IdleCPUSeconds = cpu1 - cpu0
	by, total, err := s.RSSKiB()
	if err != nil {
		t.Errors = append(t.Errors, err.Error())
		return
	}
	t.IdleRSSKiB, t.IdleRSSByProc = total, by
	log.Info("idle", zap.Int64("rss_kib", total), zap.Float64("cpu_s", t.IdleCPUSeconds))
}

func measureLoad(ctx context.Context, log *zap.Logger, s *servers.Server, t *report.Target, kubeconfigs []string, p *params, hook levelHook) {
	endpoints, err := loadConfigs(kubeconfigs)
	if err != nil {
		t.Errors = append(t.Errors, err.Error())
		return
	}
	t.Creates, t.Watch, t.Errors = runLoad(ctx, log, endpoints, p, hook, s.CPUSeconds, t.Errors)
	if err := s.Alive(); err != nil {
		t.Errors = append(t.Errors, err.Error())
	}
}

func write(run *report.Run, outJSON, outMD string) error {
	var md bytes.Buffer
	run.Markdown(&md)
	fmt.Print(md.String())
	if outMD != "" {
		if err := os.WriteFile(outMD, md.Bytes(), 0o644); err != nil {
			return fmt.Errorf("write %s: %w", outMD, err)
		}
	}
	if outJSON == "" {
		return nil
	}
	data, err := json.MarshalIndent(run, "", "  ")
	if err != nil {
		return fmt.Errorf("encode results: %w", err)
	}
	if err := os.WriteFile(outJSON, data, 0o644); err != nil {
		return fmt.Errorf("write %s: %w", outJSON, err)
	}
	return nil
}

func keepLogs(log *zap.Logger, dir, to, name string) {
	if to == "" {
		return
	}
	logs, _ := filepath.Glob(filepath.Join(dir, "*.log"))
	// A cluster's servers log into dir/s1, dir/s2, ...: name-s1-orch.log.
	sub, _ := filepath.Glob(filepath.Join(dir, "*", "*.log"))
	for _, l := range append(logs, sub...) {
		data, err := os.ReadFile(l)
		if err != nil {
			continue
		}
		rel, _ := filepath.Rel(dir, l)
		dst := filepath.Join(to, name+"-"+strings.ReplaceAll(rel, string(filepath.Separator), "-"))
		if err := os.WriteFile(dst, data, 0o600); err != nil {
			log.Warn("keep log", zap.String("file", dst), zap.Error(err))
		}
	}
}
