package schedloop

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/workqueue"

	"github.com/orch/orch/server/controllers/kit"
	"github.com/orch/orch/server/scheduler"
)

const (
	// SchedulerName is the spec.schedulerName this loop serves ("" too).
	SchedulerName = corev1.DefaultSchedulerName
	// Event reasons, as kube-scheduler records them.
	EventScheduled        = "Scheduled"
	EventFailedScheduling = "FailedScheduling"
	EventPreempted        = "Preempted"
	controllerName        = "scheduler"
)

// Config configures a Controller.
type Config struct {
	// Client talks to the API (for orch server: the loopback client).
	Client kubernetes.Interface
	// Scheduler tunes scheduler.Schedule; the zero value is the default
	// profile (the loop adds the system default spread selector).
	Scheduler scheduler.Config
	// Logger is named "scheduler"; nil = no logging.
	Logger *zap.Logger
	// RateLimiter of the workqueue; nil = exponential 10ms..10s per item
	// (kube-scheduler's pod back-off is 1s..10s).
	RateLimiter workqueue.TypedRateLimiter[string]
}

// Controller schedules pending pods. Run it only on the Raft leader.
type Controller struct {
	cfg Config
	log *zap.Logger
	// shared is set by NewShared: informers come from the server's one
	// cache and reg holds the handlers registered on it.
	shared *kit.Context
	reg    *run
}

// NewForConfig builds a clientset from rc and a Controller with it.
func NewForConfig(rc *rest.Config, cfg Config) (*Controller, error) {
	client, err := kubernetes.NewForConfig(rc)
	if err != nil {
		return nil, fmt.Errorf("schedloop: client: %w", err)
	}
	cfg.Client = client
	return New(cfg)
}

// New checks cfg and builds a standalone Controller: every Run starts its
// own informers over cfg.Client.
func New(cfg Config) (*Controller, error) {
	if cfg.Client == nil {
		return nil, errors.New("schedloop: Config.Client is required")
	}
	if cfg.Logger == nil {
		cfg.Logger = zap.NewNop()
	}
	return &Controller{cfg: cfg, log: cfg.Logger.Named(controllerName)}, nil
}

// NewShared builds a Controller on the server's shared cache (the kit
// convention): it registers its informers and handlers on kc, which the
// server starts before calling Run.
func NewShared(kc *kit.Context) (*Controller, error) {
	c, err := New(Config{Client: kc.Client, Logger: kc.Logger})
	if err != nil {
		return nil, err
	}
	c.shared = kc
	if c.reg, err = c.register(kc); err != nil {
		return nil, err
	}
	return c, nil
}

func (c *Controller) limiter() workqueue.TypedRateLimiter[string] {
	if c.cfg.RateLimiter != nil {
		return c.cfg.RateLimiter
	}
	return workqueue.NewTypedItemExponentialFailureRateLimiter[string](10*time.Millisecond, 10*time.Second)
}

// Run schedules pods until ctx ends. A standalone Controller starts from
// fresh informers and an empty assume cache on every call.
func (c *Controller) Run(ctx context.Context) error {
	if c.shared != nil {
		return c.loop(ctx, c.reg)
	}
	kc := kit.New(c.cfg.Client, c.cfg.Logger, kit.Options{})
	defer kc.Shutdown()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	r, err := c.register(kc)
	if err != nil {
		return err
	}
	if err := kc.Start(ctx); err != nil {
		return err
	}
	return c.loop(ctx, r)
}

// loop runs the single scheduling worker until ctx ends.
func (c *Controller) loop(ctx context.Context, r *run) error {
	if !kit.WaitForSync(ctx, r.synced...) {
		return ctx.Err()
	}
	c.log.Info("scheduler running")
	go func() {
		<-ctx.Done()
		r.queue.ShutDown()
	}()
	for r.processNext(ctx) {
	}
	r.inflight.Wait()
	return ctx.Err()
}

// RunFunc returns a func that builds a Controller from cfg and runs it
// until ctx ends (the form of a leader-only controller entry).
func RunFunc(cfg Config) func(ctx context.Context) error {
	return func(ctx context.Context) error {
		c, err := New(cfg)
		if err != nil {
			return err
		}
		return c.Run(ctx)
	}
}
