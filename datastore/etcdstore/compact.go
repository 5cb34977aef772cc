package etcdstore

import (
	"context"
	"fmt"
	"strconv"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
)

// compactRevKey is kube-apiserver's key: its value is the last compacted
// revision and its version a logical clock shared by every compactor on the
// same etcd, so that of several servers only one compacts per interval.
const compactRevKey = "compact_rev_key"

// compactor compacts etcd every interval to the revision it saw one
// interval before (kube-apiserver's pkg/storage/etcd3/compact.go).
type compactor struct {
	kv       clientv3.KV
	interval time.Duration
	log      *zap.Logger

	version int64 // compactRevKey's version when we last looked
	rev     int64 // the revision seen at the previous step
}

func newCompactor(kv clientv3.KV, interval time.Duration, log *zap.Logger) *compactor {
	return &compactor{kv: kv, interval: interval, log: log}
}

func (c *compactor) run(ctx context.Context) {
	t := time.NewTicker(c.interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if compacted, err := c.step(ctx); err != nil && ctx.Err() == nil {
			c.log.Warn("compaction failed", zap.Error(err))
		} else if compacted > 0 {
			c.log.Debug("compacted", zap.Int64("revision", compacted))
		}
	}
}

// step claims this interval's compaction by bumping compactRevKey's version
// from the one seen last time; whoever wins compacts to the revision it saw
// one interval ago. It returns the revision compacted (0 = none).
func (c *compactor) step(ctx context.Context) (int64, error) {
	resp, err := c.kv.Txn(ctx).If(
		clientv3.Compare(clientv3.Version(compactRevKey), "=", c.version),
	).Then(
		clientv3.OpPut(compactRevKey, strconv.FormatInt(c.rev, 10)),
	).Else(
		clientv3.OpGet(compactRevKey),
	).Commit()
	if err != nil {
		return 0, fmt.Errorf("claiming compaction: %w", err)
	}
	prev := c.rev
	c.rev = resp.Header.Revision
	if !resp.Succeeded {
		// Another server compacted this interval; follow its clock.
		if kvs := resp.Responses[0].GetResponseRange().GetKvs(); len(kvs) > 0 {
			c.version = kvs[0].Version
		}
		return 0, nil
	}
	c.version++
	if prev == 0 {
		return 0, nil // nothing seen one interval ago yet
	}
	if _, err := c.kv.Compact(ctx, prev); err != nil {
		return 0, fmt.Errorf("compacting to revision %d: %w", prev, err)
	}
	return prev, nil
}
