package webhookclient

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"
)

// Resolver finds a ready endpoint of a Service port (the aggregator's
// EndpointSlice resolver).
type Resolver interface {
	ResolveEndpoint(ctx context.Context, ns, name string, port int32) (*url.URL, error)
}

// Config is a webhook's client configuration (admissionregistration's and
// apiextensions' WebhookClientConfig have the same fields).
type Config struct {
	URL      *string
	Service  *Service
	CABundle []byte
}

// Service is a webhook's Service reference; Port defaults to 443.
type Service struct {
	Namespace, Name string
	Path            *string
	Port            *int32
}

// MaxResponse bounds a webhook's answer.
const MaxResponse = 3 << 20

// Client calls webhooks; Resolver may be nil (then only URLs work).
type Client struct {
	Resolver Resolver
}

// Post sends body (JSON) to the webhook of cc within timeout and returns
// the body of its 200 answer.
func (c *Client) Post(ctx context.Context, cc Config, timeout time.Duration, body []byte) ([]byte, error) {
	target, serverName, err := c.target(ctx, cc)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	// The webhook learns its deadline as client-go's Timeout tells a
	// server: ?timeout=<duration> (upstream's admission calls do the same).
	q := target.Query()
	q.Set("timeout", timeout.String())
	target.RawQuery = q.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, target.String(), bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	client, err := httpClient(cc.CABundle, serverName)
	if err != nil {
		return nil, err
	}
	defer client.CloseIdleConnections()
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, MaxResponse))
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("the server responded with HTTP %d: %.200s", resp.StatusCode, data)
	}
	return data, nil
}

// target is the URL to POST to and the TLS server name to verify.
func (c *Client) target(ctx context.Context, cc Config) (*url.URL, string, error) {
	if cc.URL != nil {
		u, err := url.Parse(*cc.URL)
		if err != nil {
			return nil, "", err
		}
		return u, u.Hostname(), nil
	}
	s := cc.Service
	if s == nil {
		return nil, "", errors.New("no url or service")
	}
	if c.Resolver == nil {
		return nil, "", errors.New("no service resolver")
	}
	port := int32(443)
	if s.Port != nil {
		port = *s.Port
	}
	u, err := c.Resolver.ResolveEndpoint(ctx, s.Namespace, s.Name, port)
	if err != nil {
		return nil, "", err
	}
	if s.Path != nil {
		u.Path = *s.Path
	}
	return u, s.Name + "." + s.Namespace + ".svc", nil
}

// httpClient trusts caBundle (the system roots when empty) for serverName.
func httpClient(caBundle []byte, serverName string) (*http.Client, error) {
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: serverName}
	if len(caBundle) > 0 {
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(caBundle) {
			return nil, errors.New("caBundle holds no PEM certificate")
		}
		cfg.RootCAs = pool
	}
	return &http.Client{Transport: &http.Transport{TLSClientConfig: cfg, DisableKeepAlives: true}}, nil
}
