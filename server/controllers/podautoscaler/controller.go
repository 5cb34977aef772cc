package podautoscaler

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"go.uber.org/zap"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"
	autoscalingclient "k8s.io/client-go/kubernetes/typed/autoscaling/v2"
	autoscalinglisters "k8s.io/client-go/listers/autoscaling/v2"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"
	metricsclient "k8s.io/metrics/pkg/client/clientset/versioned/typed/metrics/v1beta1"
	"k8s.io/utils/clock"

	"github.com/orch/orch/server/controllers/kit"
)

const name = "horizontal-pod-autoscaler"

// Settings are the controller's knobs (upstream's
// --horizontal-pod-autoscaler-* flags); zero values take the defaults.
type Settings struct {
	SyncPeriod      time.Duration // 15 s
	DownscaleWindow time.Duration // 5 min, without spec.behavior or its scaleDown window
	Tolerance       float64       // 0.1
	CPUInitPeriod   time.Duration // 5 min
	ReadinessDelay  time.Duration // 30 s
}

func (s Settings) withDefaults() Settings {
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&s.SyncPeriod, defaultSyncPeriod)
	def(&s.DownscaleWindow, defaultDownscaleWindow)
	def(&s.CPUInitPeriod, defaultCPUInitializationPeriod)
	def(&s.ReadinessDelay, defaultInitialReadinessDelay)
	if s.Tolerance <= 0 {
		s.Tolerance = defaultTolerance
	}
	return s
}

// Controller reconciles HorizontalPodAutoscalers.
type Controller struct {
	hpaClient autoscalingclient.HorizontalPodAutoscalersGetter
	hpas      autoscalinglisters.HorizontalPodAutoscalerLister
	pods      corelisters.PodLister
	synced    []cache.InformerSynced
	queue     kit.Queue
	scales    scaler
	metrics   metricsSource
	recorder  record.EventRecorder
	clock     clock.Clock
	settings  Settings
	log       *zap.Logger

	mu        sync.Mutex
	histories map[string]*history
	selectors map[string]labels.Selector
}

// New registers the informers and handlers on kc; it needs kc.Options.Loopback
// for the scale and metrics clients.
func New(kc *kit.Context, s Settings) (*Controller, error) {
	cfg := kc.Options.Loopback
	if cfg == nil {
		return nil, errors.New("horizontal pod autoscaler: no loopback client configuration")
	}
	clk := clock.RealClock{}
	scales, err := newRESTScaler(cfg, kc.Client.Discovery(), clk)
	if err != nil {
		return nil, err
	}
	mc, err := metricsclient.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("metrics client: %w", err)
	}
	hpas, pods := kc.Informers.Autoscaling().V2().HorizontalPodAutoscalers(), kc.Informers.Core().V1().Pods()
	c := newController(kc.Client.AutoscalingV2(), hpas.Lister(), pods.Lister(), scales, &restMetrics{client: mc},
		kc.Recorder(name), clk, kc.QueueMetrics(), s, kc.Logger.Named("hpa"))
	c.synced = []cache.InformerSynced{hpas.Informer().HasSynced, pods.Informer().HasSynced}
	if _, err := hpas.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: c.enqueue, UpdateFunc: c.update, DeleteFunc: c.deleted,
	}); err != nil {
		return nil, err
	}
	return c, nil
}

// newController wires a controller from its parts (tests use twins); mp
// (nil: none) gets the queue's workqueue_* metrics.
func newController(client autoscalingclient.HorizontalPodAutoscalersGetter, hpas autoscalinglisters.HorizontalPodAutoscalerLister,
	pods corelisters.PodLister, scales scaler, metrics metricsSource, rec record.EventRecorder, clk clock.WithTicker,
	mp workqueue.MetricsProvider, s Settings, log *zap.Logger) *Controller {
	s = s.withDefaults()
	return &Controller{hpaClient: client, hpas: hpas, pods: pods, queue: newQueue(s, clk, mp), scales: scales, metrics: metrics, recorder: rec,
		clock: clk, settings: s, log: log, histories: map[string]*history{}, selectors: map[string]labels.Selector{}}
}

// newQueue re-syncs every HPA a sync period after its last sync (upstream's
// fixed-interval HPA rate limiter), or at once when added or its spec
// changes; mp (nil: none) gets its workqueue_* metrics.
func newQueue(s Settings, clk clock.WithTicker, mp workqueue.MetricsProvider) kit.Queue {
	return workqueue.NewTypedRateLimitingQueueWithConfig(
		workqueue.NewTypedItemExponentialFailureRateLimiter[string](s.SyncPeriod, s.SyncPeriod),
		kit.MetricsQueueConfig(name, mp, clk))
}

// Run runs the workers until ctx ends.
func (c *Controller) Run(ctx context.Context) error {
	if !kit.WaitForSync(ctx, c.synced...) {
		return ctx.Err()
	}
	c.log.Info("horizontal pod autoscaler running", zap.Duration("syncPeriod", c.settings.SyncPeriod))
	kit.RunWorkers(ctx, c.queue, 2, c.sync, c.log)
	return nil
}

func (c *Controller) enqueue(obj any) { kit.Enqueue(c.queue, obj) }

// update: a spec change (generation) syncs at once; status-only updates
// (the controller's own writes) wait for the sync period.
func (c *Controller) update(oldObj, obj any) {
	o, ok1 := oldObj.(*autoscalingv2.HorizontalPodAutoscaler)
	n, ok2 := obj.(*autoscalingv2.HorizontalPodAutoscaler)
	if ok1 && ok2 && o.Generation != n.Generation {
		c.enqueue(obj)
		return
	}
	if k, ok := kit.Key(obj); ok {
		c.queue.AddRateLimited(k)
	}
}

func (c *Controller) deleted(obj any) {
	if k, ok := kit.Key(obj); ok {
		c.forget(k)
	}
}

// forget drops what the controller remembers of an HPA.
func (c *Controller) forget(key string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.histories, key)
	delete(c.selectors, key)
}

// sync reconciles one HPA and schedules its next sync a period later.
func (c *Controller) sync(ctx context.Context, key string) error {
	ns, n, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return nil
	}
	h, err := c.hpas.HorizontalPodAutoscalers(ns).Get(n)
	if apierrors.IsNotFound(err) {
		c.forget(key)
		c.queue.Forget(key)
		return nil
	}
	if err != nil {
		return err
	}
	if err := c.reconcile(ctx, h, key); err != nil && ctx.Err() == nil {
		c.log.Debug("reconciling", zap.String("hpa", key), zap.Error(err))
	}
	c.queue.AddRateLimited(key)
	return nil
}

// historyOf returns the HPA's normalization history; callers hold c.mu.
func (c *Controller) historyOf(key string) *history {
	h := c.histories[key]
	if h == nil {
		h = &history{}
		c.histories[key] = h
	}
	return h
}
