package pcrcleaner

import (
	"context"
	"fmt"
	"time"

	"go.uber.org/zap"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// Upstream's threshold and polling interval.
const (
	DefaultMaxAge = 15 * time.Minute
	DefaultSweep  = 5 * time.Minute
	pageSize      = 500
)

// Config configures a Cleaner.
type Config struct {
	Client kubernetes.Interface
	MaxAge time.Duration    // 0 = DefaultMaxAge
	Every  time.Duration    // 0 = DefaultSweep
	Now    func() time.Time // nil = time.Now
	Logger *zap.Logger      // nil = no logging
}

// Cleaner deletes old PodCertificateRequests. Run it only on the leader.
type Cleaner struct {
	cfg Config
	log *zap.Logger
}

// New returns a Cleaner with the defaults filled in.
func New(cfg Config) *Cleaner {
	if cfg.MaxAge <= 0 {
		cfg.MaxAge = DefaultMaxAge
	}
	if cfg.Every <= 0 {
		cfg.Every = DefaultSweep
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = zap.NewNop()
	}
	return &Cleaner{cfg: cfg, log: cfg.Logger.Named("pcrcleaner")}
}

// Run sweeps every cfg.Every until ctx ends.
func (c *Cleaner) Run(ctx context.Context) {
	t := time.NewTicker(c.cfg.Every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if n, err := c.Sweep(ctx); err != nil && ctx.Err() == nil {
			c.log.Warn("deleting old PodCertificateRequests", zap.Error(err))
		} else if n > 0 {
			c.log.Debug("deleted old PodCertificateRequests", zap.Int("count", n))
		}
	}
}

// Sweep deletes every request created more than MaxAge ago and returns
// how many it deleted; one that is already gone is no error.
func (c *Cleaner) Sweep(ctx context.Context) (int, error) {
	cutoff := c.cfg.Now().Add(-c.cfg.MaxAge)
	pcrs := c.cfg.Client.CertificatesV1().PodCertificateRequests(metav1.NamespaceAll)
	n, opts := 0, metav1.ListOptions{Limit: pageSize}
	for {
		l, err := pcrs.List(ctx, opts)
		if err != nil {
			return n, fmt.Errorf("listing PodCertificateRequests: %w", err)
		}
		for i := range l.Items {
			r := &l.Items[i]
			if !r.CreationTimestamp.Time.Before(cutoff) {
				continue
			}
			uid := r.UID
			err := c.cfg.Client.CertificatesV1().PodCertificateRequests(r.Namespace).Delete(ctx, r.Name,
				metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}})
			switch {
			case err == nil:
				n++
			case !apierrors.IsNotFound(err) && !apierrors.IsConflict(err):
				return n, fmt.Errorf("deleting PodCertificateRequest %s/%s: %w", r.Namespace, r.Name, err)
			}
		}
		if opts.Continue = l.Continue; opts.Continue == "" {
			return n, nil
		}
	}
}
