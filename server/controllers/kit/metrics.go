package kit

import (
	"go.uber.org/zap"
	"k8s.io/client-go/util/workqueue"

	"github.com/orch/orch/internal/metrics"
)

// NewQueue is NewQueue(name) with the workqueue_* metrics of
// Options.Metrics (labelled name=<name>), when that is set.
func (c *Context) NewQueue(name string) Queue {
	return workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
		workqueue.TypedRateLimitingQueueConfig[string]{Name: name, MetricsProvider: c.QueueMetrics()})
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
