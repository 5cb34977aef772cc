package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	containerd "github.com/containerd/containerd/v2/client"
	"github.com/containerd/containerd/v2/pkg/namespaces"
	"go.uber.org/zap"

	orchrt "github.com/orch/orch/agent/runtime"
	testimages "github.com/orch/orch/test/images"
)

// measure runs the phases in order: start server and agent, idle RSS with
// idlePods pods, then the timed pods interleaved with baseline containers.
func (e *env) measure(ctx context.Context, log *zap.Logger, f *flags, res *results) error {
	if err := e.bringUp(ctx, log, f.orch, f.shareBinary); err != nil {
		return err
	}
	res.MemStart = e.memory()
	if err := e.idlePhase(ctx, log, f, res); err != nil {
		return err
	}
	if err := e.burstPhase(ctx, log, f, res); err != nil {
		return err
	}
	return e.latencyPhase(ctx, log, f, res)
}

// bringUp starts the server and the agent, waits for the node to be Ready
// with the image imported, and prepares the baseline's namespace.
func (e *env) bringUp(ctx context.Context, log *zap.Logger, bin string, shareBinary bool) error {
	if err := os.MkdirAll(e.imageDir(), 0o755); err != nil {
		return err
	}
	tar := filepath.Join(e.work, "busybox.tar")
	if err := testimages.WriteBusyboxImage(tar, testimages.BusyboxPath, podImage); err != nil {
		return fmt.Errorf("build busybox image: %w", err)
	}
	if err := testimages.WriteBusyboxImage(filepath.Join(e.imageDir(), "busybox.tar"), testimages.BusyboxPath, podImage); err != nil {
		return fmt.Errorf("build busybox image: %w", err)
	}
	// The server runs from its own copy, written back to disk like an
	// installed binary: pages of a file written moments ago are still
	// dirty, and the kernel neither pages those out nor drops them, so
	// memtune's settle would leave them resident (and the RSS would depend
	// on how recently the binary was built).
	serverBin := filepath.Join(e.work, "orch-server")
	if err := copyFile(bin, serverBin); err != nil {
		return fmt.Errorf("copy the orch binary for the server: %w", err)
	}
	if err := e.startServer(serverBin); err != nil {
		return err
	}
	if err := waitFor(ctx, 2*time.Minute, "the server's kubeconfig and API", func() (bool, error) {
		if e.server.exited() {
			return false, fmt.Errorf("server exited (see %s)", filepath.Join(e.work, "server.log"))
		}
		if _, err := os.Stat(e.kubeconfig); err != nil {
			return false, err
		}
		cs, err := newClient(e.kubeconfig)
		if err != nil {
			return false, err
		}
		if _, err := cs.Discovery().ServerVersion(); err != nil {
			return false, err
		}
		e.cs = cs
		return true, nil
	}); err != nil {
		return err
	}
	if !e.single {
		if err := e.startSeparateAgent(bin, shareBinary); err != nil {
			return err
		}
	}
	if err := waitFor(ctx, 3*time.Minute, "the node to be Ready", func() (bool, error) {
		if e.nodeProc().exited() {
			return false, fmt.Errorf("%s exited (see %s)", e.nodeProc().name, filepath.Join(e.work, e.nodeProc().name+".log"))
		}
		return nodeReady(ctx, e.cs, e.node)
	}); err != nil {
		return err
	}
	if err := e.waitImage(ctx); err != nil {
		return err
	}
	log.Info("node Ready, image imported; importing the image for the baseline")
	var err error
	e.base, err = newBaseline(ctx, log.Named("baseline"), e.containerdSock(), e.baseNS, e.baseCgroup, tar)
	if err != nil {
		return err
	}
	e.pw, err = watchPods(ctx, e.cs)
	return err
}

// nodeProc is the process that runs the node's agent: the separate
// `orch agent`, or the server itself in single-process mode.
func (e *env) nodeProc() *child {
	if e.single {
		return e.server
	}
	return e.agent
}

// startSeparateAgent starts `orch agent` from its own copy of the binary
// (unless shareBinary), as on another node.
func (e *env) startSeparateAgent(bin string, shareBinary bool) error {
	e.log.Info("server ready; starting the agent")
	agentBin := bin
	if !shareBinary {
		agentBin = filepath.Join(e.work, "orch-agent")
		if err := copyFile(bin, agentBin); err != nil {
			return fmt.Errorf("copy the orch binary for the agent: %w", err)
		}
	}
	return e.startAgent(agentBin)
}

// waitImage waits until the agent has imported and unpacked the image (so
// pod starts measure "image present").
func (e *env) waitImage(ctx context.Context) error {
	var client *containerd.Client
	defer func() {
		if client != nil {
			_ = client.Close()
		}
	}()
	nctx := namespaces.WithNamespace(ctx, e.ns)
	return waitFor(ctx, 2*time.Minute, "the agent to import "+podImage, func() (bool, error) {
		if client == nil {
			c, err := containerd.New(e.containerdSock())
			if err != nil {
				return false, err
			}
			client = c
		}
		img, err := client.GetImage(nctx, podImage)
		if err != nil {
			return false, err
		}
		return img.IsUnpacked(nctx, orchrt.PickSnapshotter(nctx, client))
	})
}

// idlePhase starts idlePods pods (busybox httpd, with an HTTP readiness
// and an exec liveness probe), waits idle and records memory, and the CPU
// used in the idle's second half (the first is start-up settling).
func (e *env) idlePhase(ctx context.Context, log *zap.Logger, f *flags, res *results) error {
	for i := range f.idlePods {
		d, err := startPod(ctx, e.cs, e.pw, probedPod(fmt.Sprintf("idle-%02d", i), e.node), f.podTimeout)
		if err != nil {
			return err
		}
		res.IdleStarts = append(res.IdleStarts, d)
	}
	log.Info("idle pods running; waiting", zap.Int("pods", f.idlePods), zap.Duration("idle", f.idle))
	var cpu0 procCPU
	var t0 time.Time
	profiling := make(chan func(), 1) // the second half's CPU profile, to wait for
	err := e.sampleIdle(ctx, f.idle, res, func() {
		cpu0, t0 = e.cpu(), time.Now()
		profiling <- e.profileCPU(ctx, log, f.profileDir, "idle-cpu", f.idle/2-2*time.Second)
	})
	select {
	case stop := <-profiling:
		defer stop()
	default:
	}
	if err != nil {
		return err
	}
	res.IdleCPU = e.cpu().sub(cpu0)
	res.IdleCPUWindow = time.Since(t0)
	res.MemIdle = e.memory()
	if e.pprofAddr != "" && f.profileDir != "" {
		if err := e.saveHeap(ctx, f.profileDir); err != nil {
			log.Warn("heap profile", zap.Error(err))
		}
	}
	log.Info("idle memory", zap.String("server", res.MemIdle.Server.String()),
		zap.String("agent", res.MemIdle.Agent.String()), zap.String("containerd", res.MemIdle.Containerd.String()))
	return nil
}

// sampleIdle waits idle, reading the processes' RSS every 5 s, and keeps
// the highest RSS of the idle's second half (memory touched now and then,
// e.g. by periodic syncs, shows there even if it is not resident at the end;
// the first half is start-up settling).
func (e *env) sampleIdle(ctx context.Context, idle time.Duration, res *results, secondHalf func()) error {
	start := time.Now()
	half := time.AfterFunc(idle/2, secondHalf)
	defer half.Stop()
	end := time.After(idle)
	tick := time.NewTicker(5 * time.Second)
	defer tick.Stop()
	for {
		select {
		case <-end:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
			if time.Since(start) < idle/2 {
				continue
			}
			m := e.memory()
			res.IdlePeak.Server.RSS = max(res.IdlePeak.Server.RSS, m.Server.RSS)
			res.IdlePeak.Agent.RSS = max(res.IdlePeak.Agent.RSS, m.Agent.RSS)
			res.IdlePeak.ServerAgent.RSS = max(res.IdlePeak.ServerAgent.RSS, m.ServerAgent.RSS)
		}
	}
}

// latencyPhase alternates: orch pod i (create → Running and Ready), then
// baseline container i (create + start), so both see the same load.
func (e *env) latencyPhase(ctx context.Context, log *zap.Logger, f *flags, res *results) error {
	for i := range f.pods {
		d, err := startPod(ctx, e.cs, e.pw, benchPod(fmt.Sprintf("lat-%03d", i), e.node), f.podTimeout)
		if err != nil {
			return err
		}
		res.OrchStarts = append(res.OrchStarts, d)
		b, err := e.base.start(i)
		if err != nil {
			return err
		}
		res.BaseStarts = append(res.BaseStarts, b)
		if (i+1)%10 == 0 {
			log.Info("progress", zap.Int("done", i+1), zap.Duration("orch_last", d), zap.Duration("baseline_last", b))
		}
	}
	res.MemAfter = e.memory()
	return nil
}

// teardown deletes the pods through the API (the agent removes their
// sandboxes), the baseline containers, then sweeps the host.
func (e *env) teardown(ctx context.Context, log *zap.Logger) {
	if e.pw != nil {
		e.pw.stop()
	}
	if e.cs != nil && e.nodeProc() != nil && !e.nodeProc().exited() {
		if err := deletePods(ctx, e.cs, "app=podbench", 3*time.Minute); err != nil {
			log.Warn("deleting pods", zap.Error(err))
		}
	}
	e.base.cleanup()
	e.sweep()
}

// copyFile copies an executable: the agent then maps its own file, as an
// agent on another node would, instead of the server's page-cache pages.
func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o755)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	// Written back now, so its page-cache pages are clean like those of an
	// installed binary (the kernel does not reclaim dirty ones on madvise).
	if err := out.Sync(); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
