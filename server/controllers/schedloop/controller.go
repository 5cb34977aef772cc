package schedloop

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"

	"github.com/orch/orch/server/scheduler"
)

const (
	// SchedulerName is the spec.schedulerName this loop serves ("" too).
	SchedulerName = corev1.DefaultSchedulerName
	// Event reasons, as kube-scheduler records them.
	EventScheduled        = "Scheduled"
	EventFailedScheduling = "FailedScheduling"
	controllerName        = "scheduler"
)

// Config configures a Controller.
type Config struct {
	// Client talks to the API (for orch server: the loopback client).
	Client kubernetes.Interface
	// Scheduler tunes scheduler.Schedule; the zero value is the default profile.
	Scheduler scheduler.Config
	// Logger is named "scheduler"; nil = no logging.
	Logger *zap.Logger
	// RateLimiter of the workqueue; nil = exponential 10ms..10s per item
	// (kube-scheduler's pod back-off is 1s..10s).
	RateLimiter workqueue.TypedRateLimiter[string]
}

// Controller schedules pending pods. Run it only on the Raft leader.
type Controller struct {
	client  kubernetes.Interface
	sched   scheduler.Config
	log     *zap.Logger
	limiter func() workqueue.TypedRateLimiter[string]
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

// New checks cfg and builds a Controller.
func New(cfg Config) (*Controller, error) {
	if cfg.Client == nil {
		return nil, errors.New("schedloop: Config.Client is required")
	}
	if cfg.Logger == nil {
		cfg.Logger = zap.NewNop()
	}
	limiter := func() workqueue.TypedRateLimiter[string] {
		if cfg.RateLimiter != nil {
			return cfg.RateLimiter
		}
		return workqueue.NewTypedItemExponentialFailureRateLimiter[string](10*time.Millisecond, 10*time.Second)
	}
	return &Controller{client: cfg.Client, sched: cfg.Scheduler, log: cfg.Logger.Named(controllerName), limiter: limiter}, nil
}

// Run schedules pods until ctx ends. Every call starts from fresh
// informers and an empty assume cache.
func (c *Controller) Run(ctx context.Context) error {
	factory := informers.NewSharedInformerFactory(c.client, 0)
	pods, nodes := factory.Core().V1().Pods(), factory.Core().V1().Nodes()
	broadcaster := record.NewBroadcaster(record.WithContext(ctx))
	defer broadcaster.Shutdown()
	broadcaster.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: c.client.CoreV1().Events("")})
	r := newRun(c, pods.Lister(), nodes.Lister(),
		workqueue.NewTypedRateLimitingQueueWithConfig(c.limiter(), workqueue.TypedRateLimitingQueueConfig[string]{Name: controllerName}),
		broadcaster.NewRecorder(scheme.Scheme, corev1.EventSource{Component: SchedulerName}))
	defer r.queue.ShutDown()
	if _, err := pods.Informer().AddEventHandler(r.podHandlers()); err != nil {
		return fmt.Errorf("schedloop: %w", err)
	}
	if _, err := nodes.Informer().AddEventHandler(r.nodeHandlers()); err != nil {
		return fmt.Errorf("schedloop: %w", err)
	}
	factory.Start(ctx.Done())
	defer factory.Shutdown()
	if !cache.WaitForCacheSync(ctx.Done(), pods.Informer().HasSynced, nodes.Informer().HasSynced) {
		return ctx.Err()
	}
	c.log.Info("scheduler running")
	go func() {
		<-ctx.Done()
		r.queue.ShutDown()
	}()
	for r.processNext(ctx) {
	}
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
