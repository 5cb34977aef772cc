package kit

import (
	"time"

	"go.uber.org/zap"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/clock"

	"github.com/orch/orch/internal/metrics"
)

// NewQueue is NewQueue(name) with the workqueue_* metrics of
// Options.Metrics (labelled name=<name>), when that is set.
func (c *Context) NewQueue(name string) Queue {
	return workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
		c.QueueConfig(name))
}

// QueueConfig is the config of a queue named name with the workqueue_*
// metrics of Options.Metrics (none without them), for queues built with
// their own rate limiter.
func (c *Context) QueueConfig(name string) workqueue.TypedRateLimitingQueueConfig[string] {
	return MetricsQueueConfig(name, c.QueueMetrics(), clock.RealClock{})
}

// MetricsQueueConfig is the config of a queue named name with the
// metrics of mp (nil: none) on clk.
//
// client-go refreshes two gauges of every queue with metrics
// (workqueue_unfinished_work_seconds, workqueue_longest_running_processor_seconds)
// from a 500 ms ticker: with the server's 17 such queues, 34 wake-ups a
// second while nothing happens. Their tickers tick at most every
// GaugePeriod here, which is still more often than Prometheus scrapes
// (the delaying queue's 10 s heartbeat, the queue's only other ticker,
// keeps its period).
func MetricsQueueConfig(name string, mp workqueue.MetricsProvider, clk clock.WithTicker) workqueue.TypedRateLimitingQueueConfig[string] {
	cfg := workqueue.TypedRateLimitingQueueConfig[string]{Name: name, Clock: clk, MetricsProvider: mp}
	if mp != nil {
		cfg.Clock = slowTickers{clk}
	}
	return cfg
}

// GaugePeriod is how often queues refresh their time-based gauges.
const GaugePeriod = 10 * time.Second

// slowTickers is a clock whose tickers tick at most every GaugePeriod.
type slowTickers struct{ clock.WithTicker }

func (c slowTickers) NewTicker(d time.Duration) clock.Ticker {
	return c.WithTicker.NewTicker(max(d, GaugePeriod))
}

// QueueMetrics is the workqueue metrics provider for queues built with
// their own rate limiter; nil without Options.Metrics.
func (c *Context) QueueMetrics() workqueue.MetricsProvider {
	if c.Options.Metrics == nil {
		return nil
	}
	p, err := metrics.NewWorkqueue(c.Options.Metrics)
	if err != nil {
		c.Logger.Warn("workqueue metrics disabled", zap.Error(err))
		return nil
	}
	return p
}
