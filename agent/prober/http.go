package prober

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	v1 "k8s.io/api/core/v1"
)

// KubeVersion is the major.minor in kubelet's User-Agent (kube-probe/1.37).
const KubeVersion = "1.37"

// NewHTTPClient is kubelet's probe/hook HTTP client: no certificate
// verification, no keep-alives, no proxy, no compression, and redirects
// followed only to the same host (up to 10).
func NewHTTPClient() *http.Client {
	tr := &http.Transport{
		TLSClientConfig:    &tls.Config{InsecureSkipVerify: true}, //nolint:gosec // kubelet semantics
		DisableKeepAlives:  true,
		DisableCompression: true,
		Proxy:              nil,
		DialContext:        (&net.Dialer{}).DialContext,
	}
	return &http.Client{Transport: tr, CheckRedirect: sameHostRedirects}
}

func sameHostRedirects(req *http.Request, via []*http.Request) error {
	if req.URL.Hostname() != via[0].URL.Hostname() {
		return http.ErrUseLastResponse
	}
	if len(via) >= 10 {
		return errors.New("stopped after 10 redirects")
	}
	return nil
}

// NewHTTPGetRequest builds kubelet's GET for an httpGet action of container
// c: host defaults to podIP, a named port is resolved from c's ports, the
// action's headers are set (a Host header sets the request's host), and
// User-Agent kube-<fragment>/1.37 and Accept */* unless given.
// fragment is "probe" or "lifecycle".
func NewHTTPGetRequest(ctx context.Context, a *v1.HTTPGetAction, c *v1.Container, podIP, fragment string) (*http.Request, error) {
	port, err := ResolvePort(a.Port, c)
	if err != nil {
		return nil, err
	}
	scheme := strings.ToLower(string(a.Scheme))
	if scheme == "" {
		scheme = "http"
	}
	u, err := url.Parse(a.Path)
	if err != nil {
		u = &url.URL{Path: a.Path}
	}
	host, err := hostOr(a.Host, podIP)
	if err != nil {
		return nil, err
	}
	u.Scheme = scheme
	u.Host = net.JoinHostPort(host, strconv.Itoa(port))
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, fmt.Errorf("http request for %s: %w", u, err)
	}
	h := http.Header{}
	for _, hd := range a.HTTPHeaders {
		h.Add(hd.Name, hd.Value)
	}
	if _, ok := h["User-Agent"]; !ok {
		h.Set("User-Agent", fmt.Sprintf("kube-%s/%s", fragment, KubeVersion))
	}
	if _, ok := h["Accept"]; !ok {
		h.Set("Accept", "*/*")
	} else if h.Get("Accept") == "" {
		h.Del("Accept")
	}
	req.Header = h
	req.Host = h.Get("Host")
	return req, nil
}

// probeHTTP is kubelet's HTTP probe: 200-299 success, 300-399 a redirect
// not followed (success with a warning), anything else or no answer failure.
func probeHTTP(ctx context.Context, client *http.Client, a *v1.HTTPGetAction, c *v1.Container, podIP string) (outcome, string, error) {
	req, err := NewHTTPGetRequest(ctx, a, c, podIP, "probe")
	if err != nil {
		return outFailure, "", err
	}
	res, err := client.Do(req)
	if err != nil {
		if timedOut(ctx) {
			return outFailure, fmt.Sprintf("Get %q: context deadline exceeded (Client.Timeout exceeded while awaiting headers)", req.URL.String()), nil
		}
		return outFailure, err.Error(), nil
	}
	defer res.Body.Close()
	b, err := io.ReadAll(io.LimitReader(res.Body, maxOutput))
	if err != nil {
		return outFailure, err.Error(), nil
	}
	body := string(b)
	switch {
	case res.StatusCode >= 200 && res.StatusCode < 300:
		return outSuccess, body, nil
	case res.StatusCode >= 300 && res.StatusCode < 400:
		return outWarning, fmt.Sprintf("Probe terminated redirects, Response body: %v", body), nil
	}
	return outFailure, fmt.Sprintf("HTTP probe failed with statuscode: %d", res.StatusCode), nil
}
