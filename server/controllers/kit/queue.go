package kit

import (
	"context"
	"fmt"
	"time"

	"go.uber.org/zap"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
)

// Queue is a rate-limited queue of "namespace/name" keys.
type Queue = workqueue.TypedRateLimitingInterface[string]

// SyncFunc reconciles one key; an error requeues it with back-off.
type SyncFunc func(ctx context.Context, key string) error

// NewQueue returns a queue with client-go's default controller rate limiter
// (per-item exponential 5ms..1000s plus an overall 10 qps/100 bucket).
func NewQueue(name string) Queue {
	return workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
		workqueue.TypedRateLimitingQueueConfig[string]{Name: name})
}

// Key is the queue key of obj (tombstones included).
func Key(obj any) (string, bool) {
	k, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj)
	return k, err == nil
}

// Enqueue adds obj's key to q.
func Enqueue(q Queue, obj any) {
	if k, ok := Key(obj); ok {
		q.Add(k)
	}
}

// EnqueueHandler enqueues the key of every added, updated or deleted object.
func EnqueueHandler(q Queue) cache.ResourceEventHandler {
	return cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { Enqueue(q, obj) },
		UpdateFunc: func(_, obj any) { Enqueue(q, obj) },
		DeleteFunc: func(obj any) { Enqueue(q, obj) },
	}
}

// RunWorkers runs n workers over q until ctx ends, then shuts q down.
// Errors are logged and the key is retried with back-off; success forgets
// the key's back-off.
func RunWorkers(ctx context.Context, q Queue, n int, sync SyncFunc, log *zap.Logger) {
	go func() {
		<-ctx.Done()
		q.ShutDown()
	}()
	done := make(chan struct{})
	for range n {
		go func() {
			defer func() { done <- struct{}{} }()
			for processNext(ctx, q, sync, log) {
			}
		}()
	}
	for range n {
		<-done
	}
}

func processNext(ctx context.Context, q Queue, sync SyncFunc, log *zap.Logger) bool {
	key, quit := q.Get()
	if quit {
		return false
	}
	defer q.Done(key)
	if err := safeSync(ctx, sync, key); err != nil {
		if ctx.Err() == nil {
			log.Debug("sync failed, retrying", zap.String("key", key), zap.Error(err))
		}
		q.AddRateLimited(key)
		return true
	}
	q.Forget(key)
	return true
}

// safeSync turns a panic in sync into an error, so one bad object cannot
// stop the server.
func safeSync(ctx context.Context, sync SyncFunc, key string) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic syncing %s: %v", key, r)
		}
	}()
	return sync(ctx, key)
}

// Requeue after d (for time-based conditions: minReadySeconds, deadlines).
func Requeue(q Queue, key string, d time.Duration) {
	q.AddAfter(key, d)
}
