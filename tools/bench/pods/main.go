package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

type flags struct {
	orch, workDir, outMD, outJSON, machine, keepLogs string
	pprofAddr, profileDir, burstList                 string
	pods, idlePods                                   int
	bursts                                           []int
	idle, podTimeout                                 time.Duration
	shareBinary, separateAgent                       bool
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	log, err := zap.NewDevelopment(zap.AddStacktrace(zapcore.DPanicLevel))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	if len(os.Args) > 1 && os.Args[1] == "summarize" {
		if err := summarizeFiles(os.Args[2:]); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		return
	}
	var f flags
	fs := flag.NewFlagSet("podbench", flag.ContinueOnError)
	fs.StringVar(&f.orch, "orch", "", "orch binary (required)")
	fs.StringVar(&f.workDir, "work-dir", "", "scratch directory (default: a new temp dir, removed at the end)")
	fs.StringVar(&f.outMD, "out-md", "", "write the Markdown results here")
	fs.StringVar(&f.outJSON, "out-json", "", "write the results as JSON here")
	fs.StringVar(&f.machine, "machine", "", "machine description for the report")
	fs.StringVar(&f.keepLogs, "keep-logs", "", "copy the server and agent logs into this directory")
	fs.IntVar(&f.pods, "pods", 30, "pods (and baseline containers) timed, one after another")
	fs.IntVar(&f.idlePods, "idle-pods", 10, "pods (httpd with an HTTP readiness and an exec liveness probe) running during the idle measurement")
	fs.DurationVar(&f.idle, "idle", 3*time.Minute, "idle time before measuring memory (CPU is measured over its second half)")
	fs.StringVar(&f.burstList, "burst", "30", "pods created at once, per burst (comma-separated; empty: none)")
	fs.BoolVar(&f.separateAgent, "separate-agent", false, "run `orch server --disable-agent` and a separate `orch agent` (default: `orch server` with its own agent, one process)")
	fs.BoolVar(&f.shareBinary, "share-binary", false, "with --separate-agent: run the agent from the same binary file as the server (default: from its own copy, as on a separate node, so the two processes do not share the binary's page-cache pages)")
	fs.StringVar(&f.pprofAddr, "pprof-address", "", "the server's --pprof-address (loopback host:port; needed for --profile-dir)")
	fs.StringVar(&f.profileDir, "profile-dir", "", "write the server's CPU profile over the idle's second half, its heap profile after the idle and a 10 s CPU profile from each burst's start here")
	fs.DurationVar(&f.podTimeout, "pod-timeout", 2*time.Minute, "give up on a pod not Ready after this long")
	if err := fs.Parse(os.Args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return
		}
		os.Exit(2)
	}
	if err := run(ctx, log.Named("podbench"), &f); err != nil {
		log.Error("pod benchmark failed", zap.Error(err))
		os.Exit(1)
	}
}

func run(ctx context.Context, log *zap.Logger, f *flags) (err error) {
	if f.orch == "" {
		return errors.New("--orch is required")
	}
	if f.bursts, err = parseInts(f.burstList); err != nil {
		return fmt.Errorf("--burst: %w", err)
	}
	if os.Geteuid() != 0 {
		return errors.New("the pod benchmark needs root (netns, bridge, iptables, cgroups, containerd)")
	}
	if f.workDir == "" {
		if f.workDir, err = os.MkdirTemp("", "orch-podbench-"); err != nil {
			return err
		}
		defer os.RemoveAll(f.workDir)
	} else if err := os.MkdirAll(f.workDir, 0o700); err != nil {
		return err
	}
	e, err := newEnv(log, f.workDir, !f.separateAgent)
	if err != nil {
		return err
	}
	e.pprofAddr = f.pprofAddr
	log.Info("isolated names", zap.String("id", e.id), zap.String("node", e.node), zap.String("bridge", e.bridge),
		zap.String("pod_cidr", e.podCIDR), zap.String("work", e.work))
	res := &results{Started: time.Now().UTC(), Machine: f.machine, Pods: f.pods, IdlePods: f.idlePods, Idle: f.idle, Single: e.single}
	defer func() {
		// Everything the run made goes, whatever happened above.
		cctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		e.teardown(cctx, log)
		if f.keepLogs != "" {
			copyLogs(e.work, f.keepLogs)
		}
		if left := e.leftovers(); len(left) > 0 {
			log.Error("left behind after cleanup", zap.Strings("what", left))
			err = errors.Join(err, fmt.Errorf("cleanup left %v", left))
		}
		res.Err = errString(err)
		if werr := res.write(f.outMD, f.outJSON); werr != nil {
			err = errors.Join(err, werr)
		}
	}()
	return e.measure(ctx, log, f, res)
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func copyLogs(work, dst string) {
	_ = os.MkdirAll(dst, 0o755)
	for _, n := range []string{"server.log", "agent.log"} {
		if b, err := os.ReadFile(filepath.Join(work, n)); err == nil {
			_ = os.WriteFile(filepath.Join(dst, "podbench-"+n), b, 0o644)
		}
	}
}
