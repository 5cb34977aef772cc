package webhook

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
)

// Resolver finds a ready endpoint of a Service port (the aggregator's
// EndpointSlice resolver).
type Resolver interface {
	ResolveEndpoint(ctx context.Context, ns, name string, port int32) (*url.URL, error)
}

// maxResponse bounds a webhook's answer.
const maxResponse = 3 << 20

// call POSTs review to the webhook and returns its response.
func (d *Dispatcher) call(ctx context.Context, cc admissionregistrationv1.WebhookClientConfig, timeout time.Duration,
	review *admissionv1.AdmissionReview) (*admissionv1.AdmissionResponse, error) {
	target, serverName, err := d.target(ctx, cc)
	if err != nil {
		return nil, err
	}
	body, err := json.Marshal(review)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
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
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxResponse))
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("the server responded with HTTP %d: %.200s", resp.StatusCode, data)
	}
	return decodeResponse(data, review.Request.UID)
}

func decodeResponse(data []byte, uid any) (*admissionv1.AdmissionResponse, error) {
	var out admissionv1.AdmissionReview
	if err := json.Unmarshal(data, &out); err != nil {
		return nil, fmt.Errorf("received invalid webhook response: %w", err)
	}
	if out.Response == nil {
		return nil, errors.New("webhook response was absent")
	}
	if out.APIVersion != "admission.k8s.io/v1" || out.Kind != "AdmissionReview" {
		return nil, fmt.Errorf("expected webhook response of admission.k8s.io/v1, Kind=AdmissionReview, got %s, Kind=%s", out.APIVersion, out.Kind)
	}
	if fmt.Sprint(out.Response.UID) != fmt.Sprint(uid) {
		return nil, fmt.Errorf("expected response.uid=%q, got %q", uid, out.Response.UID)
	}
	return out.Response, nil
}

// target is the URL to POST to and the TLS server name to verify.
func (d *Dispatcher) target(ctx context.Context, cc admissionregistrationv1.WebhookClientConfig) (*url.URL, string, error) {
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
	if d.resolver == nil {
		return nil, "", errors.New("no service resolver")
	}
	port := int32(443)
	if s.Port != nil {
		port = *s.Port
	}
	u, err := d.resolver.ResolveEndpoint(ctx, s.Namespace, s.Name, port)
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
