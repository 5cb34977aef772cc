package etcdstore

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/concurrency"
	"go.uber.org/zap"
)

// DefaultElectionTTL is the lease TTL of an Election: how long a crashed
// leader keeps leadership before another server takes over.
const DefaultElectionTTL = 10 * time.Second

// Election campaigns for leadership of key on etcd (a lease-bound key, the
// concurrency package's election) for as long as it is open, and reports
// changes the way the Raft store does: LeaderCh channels hold the latest
// state. Leadership is reported lost as soon as the lease cannot be kept
// alive, before etcd lets another candidate win.
type Election struct {
	client *clientv3.Client
	key    string
	id     string
	ttl    time.Duration
	log    *zap.Logger

	mu     sync.Mutex
	leader bool
	subs   []chan bool
	closed bool

	cancel context.CancelFunc
	done   chan struct{}
}

// NewElection starts campaigning as identity (any text naming this server).
func NewElection(client *clientv3.Client, key, identity string, ttl time.Duration, log *zap.Logger) *Election {
	if ttl < time.Second {
		ttl = DefaultElectionTTL
	}
	e := &Election{client: client, key: key, id: identity, ttl: ttl, log: log, done: make(chan struct{})}
	ctx, cancel := context.WithCancel(context.Background())
	e.cancel = cancel
	go func() {
		defer close(e.done)
		for ctx.Err() == nil {
			if err := e.term(ctx); err != nil && ctx.Err() == nil {
				e.log.Warn("leader election", zap.Error(err))
				sleepCtx(ctx, time.Second)
			}
		}
	}()
	return e
}

// term opens a session, campaigns, leads until the session is lost or ctx
// ends, and gives the lease back.
func (e *Election) term(ctx context.Context) error {
	// The session outlives ctx so that its Close can still revoke the lease
	// (handing leadership over at once); ctx only aborts the lease grant.
	sctx, scancel := context.WithCancel(context.Background())
	defer scancel()
	abortGrant := context.AfterFunc(ctx, scancel)
	sess, err := concurrency.NewSession(e.client, concurrency.WithTTL(int(e.ttl/time.Second)), concurrency.WithContext(sctx))
	if !abortGrant() || err != nil {
		if err == nil {
			_ = sess.Close()
			err = ctx.Err()
		}
		return fmt.Errorf("opening a session: %w", err)
	}
	defer func() { _ = sess.Close() }()
	el := concurrency.NewElection(sess, e.key)
	if err := el.Campaign(ctx, e.id); err != nil {
		return fmt.Errorf("campaigning: %w", err)
	}
	if err := stillOurs(ctx, el, sess); err != nil {
		return err
	}
	e.log.Info("won the datastore leader election", zap.String("key", e.key))
	e.set(true)
	defer e.set(false)
	select {
	case <-sess.Done():
		e.log.Warn("lost the datastore leader election: session expired")
	case <-ctx.Done():
	}
	return nil
}

// stillOurs checks after Campaign that the session lived and our key leads.
func stillOurs(ctx context.Context, el *concurrency.Election, sess *concurrency.Session) error {
	select {
	case <-sess.Done():
		return errors.New("session expired while campaigning")
	default:
	}
	resp, err := el.Leader(ctx)
	if err != nil {
		return fmt.Errorf("reading the leader: %w", err)
	}
	if string(resp.Kvs[0].Key) != el.Key() {
		return errors.New("another server leads after our campaign")
	}
	return nil
}

func sleepCtx(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

func (e *Election) set(v bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.leader = v
	for _, c := range e.subs {
		select { // keep only the latest state
		case <-c:
		default:
		}
		c <- v
	}
}

// IsLeader reports whether this server currently holds leadership.
func (e *Election) IsLeader() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.leader
}

// LeaderCh returns a channel that holds the current state at once and then
// the latest change; it is closed by Close.
func (e *Election) LeaderCh() <-chan bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	c := make(chan bool, 1)
	if e.closed {
		close(c)
		return c
	}
	c <- e.leader
	e.subs = append(e.subs, c)
	return c
}

// Close resigns (revoking the lease, so another server takes over at once)
// and closes every LeaderCh channel.
func (e *Election) Close() error {
	e.cancel()
	<-e.done
	e.mu.Lock()
	defer e.mu.Unlock()
	if !e.closed {
		e.closed = true
		for _, c := range e.subs {
			close(c)
		}
	}
	return nil
}
