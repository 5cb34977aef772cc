package etcdstore

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"
	"time"

	"go.uber.org/zap"
)

// Defaults of Config.
const (
	DefaultCompactInterval = 5 * time.Minute
	DefaultDialTimeout     = 10 * time.Second
)

// Config says how to reach etcd and how to keep its history.
type Config struct {
	// Endpoints are etcd client URLs (https://host:2379).
	Endpoints []string
	// TLS is the client TLS configuration (nil for plain http endpoints).
	TLS *tls.Config
	// Prefix, when set, is prepended to every key (etcd namespacing), so
	// several stores can share one etcd.
	Prefix string
	// CompactInterval is how often the history is compacted (kube-apiserver's
	// --etcd-compaction-interval): 0 means DefaultCompactInterval, < 0 never.
	CompactInterval time.Duration
	// HistoryRevisions, when > 0, makes the store refuse (ErrCompacted)
	// ListAt and Watch older than this many revisions, whatever etcd still
	// keeps: the bounded-history behaviour of the Raft store. 0 = only etcd's
	// own compaction limits the history.
	HistoryRevisions int64
	DialTimeout      time.Duration
	Logger           *zap.Logger
}

func (c *Config) withDefaults() (Config, error) {
	out := *c
	if len(out.Endpoints) == 0 {
		return out, errors.New("etcdstore: no endpoints")
	}
	for _, ep := range out.Endpoints {
		u, err := url.Parse(ep)
		if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
			return out, fmt.Errorf("etcdstore: endpoint %q is not an http(s)://host:port URL", ep)
		}
	}
	if out.CompactInterval == 0 {
		out.CompactInterval = DefaultCompactInterval
	}
	if out.DialTimeout <= 0 {
		out.DialTimeout = DefaultDialTimeout
	}
	if out.Logger == nil {
		out.Logger = zap.NewNop()
	}
	return out, nil
}

// ParseEndpoints splits a comma-separated endpoint list (the
// --datastore-endpoint flag), dropping empty items and surrounding blanks.
func ParseEndpoints(s string) []string {
	var out []string
	for _, ep := range strings.Split(s, ",") {
		if ep = strings.TrimSpace(ep); ep != "" {
			out = append(out, ep)
		}
	}
	return out
}

// LoadTLS builds the client TLS configuration from PEM files: caFile is the
// CA that signed etcd's serving certificate (empty = system roots), certFile
// and keyFile the client certificate (both or neither).
func LoadTLS(caFile, certFile, keyFile string) (*tls.Config, error) {
	cfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if caFile != "" {
		pem, err := os.ReadFile(caFile)
		if err != nil {
			return nil, fmt.Errorf("--datastore-cafile: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("--datastore-cafile %s: no PEM certificate found", caFile)
		}
		cfg.RootCAs = pool
	}
	if (certFile == "") != (keyFile == "") {
		return nil, errors.New("--datastore-certfile and --datastore-keyfile must be given together")
	}
	if certFile != "" {
		cert, err := tls.LoadX509KeyPair(certFile, keyFile)
		if err != nil {
			return nil, fmt.Errorf("--datastore-certfile/--datastore-keyfile: %w", err)
		}
		cfg.Certificates = []tls.Certificate{cert}
	}
	return cfg, nil
}
