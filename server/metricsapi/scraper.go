package metricsapi

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	corelisters "k8s.io/client-go/listers/core/v1"
)

// DefaultResolution is how often nodes are scraped (metrics-server's
// --metric-resolution default).
const DefaultResolution = 15 * time.Second

// scrapeTimeout bounds one node's scrape (metrics-server's
// --kubelet-request-timeout default).
const scrapeTimeout = 10 * time.Second

// maxBody bounds a /metrics/resource response.
const maxBody = 16 << 20

// Fetcher reads a node's kubelet /metrics/resource.
type Fetcher interface {
	Fetch(ctx context.Context, node *corev1.Node) ([]byte, error)
}

// NodeLister lists the cluster's nodes.
type NodeLister interface {
	List(ctx context.Context) ([]corev1.Node, error)
}

// Scraper fills a Store from the Ready nodes every Resolution.
type Scraper struct {
	Nodes      NodeLister
	Fetch      Fetcher
	Store      *Store
	Resolution time.Duration // 0 = DefaultResolution
	Log        *zap.Logger
}

// Run scrapes until ctx ends.
func (s *Scraper) Run(ctx context.Context) {
	res := s.Resolution
	if res <= 0 {
		res = DefaultResolution
	}
	t := time.NewTicker(res)
	defer t.Stop()
	for {
		s.ScrapeOnce(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// ScrapeOnce scrapes every Ready node concurrently and records what came
// back; nodes that are gone or not Ready are forgotten. With no nodes it
// only lists them.
func (s *Scraper) ScrapeOnce(ctx context.Context) {
	nodes, err := s.Nodes.List(ctx)
	if err != nil {
		if ctx.Err() == nil {
			s.Log.Warn("listing nodes to scrape", zap.Error(err))
		}
		return
	}
	keep := map[string]bool{}
	var wg sync.WaitGroup
	for i := range nodes {
		n := &nodes[i]
		if !ready(n) {
			continue
		}
		keep[n.Name] = true
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.scrapeNode(ctx, n)
		}()
	}
	wg.Wait()
	s.Store.Retain(keep)
}

func (s *Scraper) scrapeNode(parent context.Context, n *corev1.Node) {
	ctx, cancel := context.WithTimeout(parent, scrapeTimeout)
	defer cancel()
	body, err := s.Fetch.Fetch(ctx, n)
	if err == nil {
		var b Batch
		if b, err = parseResourceMetrics(body, time.Now()); err == nil {
			s.Store.Put(n.Name, b)
			return
		}
	}
	s.Store.Drop(n.Name)
	if parent.Err() == nil {
		s.Log.Warn("scraping node metrics", zap.String("node", n.Name), zap.Error(err))
	}
}

func ready(n *corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// ListerNodes lists nodes from an informer's cache (the server's shared
// cache): no request per scrape. Before the cache has synced it lists
// none (the first scrape of a starting server has nothing to scrape).
type ListerNodes struct {
	Lister corelisters.NodeLister
	Synced func() bool
}

// List implements NodeLister.
func (l ListerNodes) List(context.Context) ([]corev1.Node, error) {
	if !l.Synced() {
		return nil, nil
	}
	ns, err := l.Lister.List(labels.Everything())
	if err != nil {
		return nil, err
	}
	out := make([]corev1.Node, len(ns))
	for i, n := range ns {
		out[i] = *n // read only: the scraper does not change nodes
	}
	return out, nil
}

// KubeletFetcher reads /metrics/resource over HTTPS with the API server's
// kubelet client TLS configuration (client certificate and cluster CA).
type KubeletFetcher struct{ client *http.Client }

// NewKubeletFetcher returns a fetcher presenting tc.
func NewKubeletFetcher(tc *tls.Config) *KubeletFetcher {
	tr := &http.Transport{
		TLSClientConfig:     tc.Clone(),
		DialContext:         (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		TLSHandshakeTimeout: 5 * time.Second,
		MaxIdleConnsPerHost: 1,
		IdleConnTimeout:     2 * DefaultResolution,
	}
	return &KubeletFetcher{client: &http.Client{Transport: tr}}
}

// Fetch implements Fetcher.
func (f *KubeletFetcher) Fetch(ctx context.Context, node *corev1.Node) ([]byte, error) {
	addr, err := kubeletAddress(node)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "https://"+addr+"/metrics/resource", nil)
	if err != nil {
		return nil, err
	}
	resp, err := f.client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("GET /metrics/resource of %s: %w", node.Name, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET /metrics/resource of %s: %s", node.Name, resp.Status)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxBody))
	if err != nil {
		return nil, fmt.Errorf("reading /metrics/resource of %s: %w", node.Name, err)
	}
	return body, nil
}

// kubeletAddress is host:port of a node's agent API: the first
// InternalIP, else ExternalIP, else Hostname (as the API server's node
// proxy), and the port the node reports (default 10250).
func kubeletAddress(n *corev1.Node) (string, error) {
	port := int(n.Status.DaemonEndpoints.KubeletEndpoint.Port)
	if port <= 0 {
		port = 10250
	}
	for _, typ := range []corev1.NodeAddressType{corev1.NodeInternalIP, corev1.NodeExternalIP, corev1.NodeHostName} {
		for _, a := range n.Status.Addresses {
			if a.Type == typ && a.Address != "" {
				return net.JoinHostPort(a.Address, strconv.Itoa(port)), nil
			}
		}
	}
	return "", fmt.Errorf("node %s reports no address to reach its kubelet API", n.Name)
}
