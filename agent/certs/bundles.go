package certs

import (
	"context"
	"encoding/pem"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"

	"go.uber.org/zap"
	certificatesv1 "k8s.io/api/certificates/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	certlisters "k8s.io/client-go/listers/certificates/v1"
	"k8s.io/client-go/tools/cache"
)

// syncTimeout bounds the wait for the informer's first list.
const syncTimeout = 10 * time.Second

// errNotRunning: Bundles.Run has not been called (or has returned).
var errNotRunning = errors.New("ClusterTrustBundle manager is not running")

// Bundles reads ClusterTrustBundles for projected volumes.
type Bundles struct {
	client kubernetes.Interface
	log    *zap.Logger

	mu      sync.Mutex
	ctx     context.Context // Run's: the informer's lifetime
	lister  certlisters.ClusterTrustBundleLister
	synced  cache.InformerSynced
	started bool
}

// NewBundles returns a Bundles reading through client; Run starts it.
func NewBundles(client kubernetes.Interface, log *zap.Logger) *Bundles {
	return &Bundles{client: client, log: log.Named("trustbundles")}
}

// Run lets the informer start (lazily, on the first projection) and
// bounds its life; it returns when ctx ends.
func (b *Bundles) Run(ctx context.Context) {
	b.mu.Lock()
	b.ctx = ctx
	b.mu.Unlock()
	<-ctx.Done()
}

// ensure starts the informer once and waits for its first list.
func (b *Bundles) ensure(ctx context.Context) (certlisters.ClusterTrustBundleLister, error) {
	b.mu.Lock()
	if b.ctx == nil || b.ctx.Err() != nil {
		b.mu.Unlock()
		return nil, errNotRunning
	}
	if !b.started {
		f := informers.NewSharedInformerFactory(b.client, 0)
		inf := f.Certificates().V1().ClusterTrustBundles()
		b.lister, b.synced = inf.Lister(), inf.Informer().HasSynced
		f.StartWithContext(b.ctx)
		b.started = true
		b.log.Info("started the ClusterTrustBundle informer")
	}
	lister, synced := b.lister, b.synced
	b.mu.Unlock()
	wctx, cancel := context.WithTimeout(ctx, syncTimeout)
	defer cancel()
	if !cache.WaitForCacheSync(wctx.Done(), synced) {
		return nil, errors.New("ClusterTrustBundle informer has not yet synced")
	}
	return lister, nil
}

// TrustAnchorsByName implements volumes.TrustBundleSource.
func (b *Bundles) TrustAnchorsByName(ctx context.Context, name string, allowMissing bool) ([]byte, error) {
	lister, err := b.ensure(ctx)
	if err != nil {
		return nil, err
	}
	ctb, err := lister.Get(name)
	if apierrors.IsNotFound(err) && allowMissing {
		return []byte{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("while getting ClusterTrustBundle: %w", err)
	}
	return normalize([]*certificatesv1.ClusterTrustBundle{ctb}), nil
}

// TrustAnchorsBySigner implements volumes.TrustBundleSource.
func (b *Bundles) TrustAnchorsBySigner(ctx context.Context, signer string, selector *metav1.LabelSelector, allowMissing bool) ([]byte, error) {
	lister, err := b.ensure(ctx)
	if err != nil {
		return nil, err
	}
	sel, err := metav1.LabelSelectorAsSelector(selector) // nil: labels.Nothing()
	if err != nil {
		return nil, fmt.Errorf("while parsing label selector: %w", err)
	}
	all, err := lister.List(sel)
	if err != nil {
		return nil, fmt.Errorf("while listing ClusterTrustBundles matching label selector %v: %w", selector, err)
	}
	var mine []*certificatesv1.ClusterTrustBundle
	for _, c := range all {
		if c.Spec.SignerName == signer {
			mine = append(mine, c)
		}
	}
	if len(mine) == 0 {
		if allowMissing {
			return []byte{}, nil
		}
		return nil, errors.New("combination of signerName and labelSelector matched zero ClusterTrustBundles")
	}
	return normalize(mine), nil
}

// normalize is every distinct anchor of ctbs, re-encoded as header-less
// PEM CERTIFICATE blocks in a stable order (upstream shuffles it once
// per kubelet start; sorting keeps the files unchanged across restarts).
func normalize(ctbs []*certificatesv1.ClusterTrustBundle) []byte {
	seen := map[string]bool{}
	var ders []string
	for _, c := range ctbs {
		rest := []byte(c.Spec.TrustBundle)
		for {
			var blk *pem.Block
			if blk, rest = pem.Decode(rest); blk == nil {
				break
			}
			if d := string(blk.Bytes); !seen[d] {
				seen[d] = true
				ders = append(ders, d)
			}
		}
	}
	sort.Strings(ders)
	out := []byte{}
	for _, d := range ders {
		out = append(out, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: []byte(d)})...)
	}
	return out
}
