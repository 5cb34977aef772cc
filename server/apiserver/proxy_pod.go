package apiserver

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/apimachinery/pkg/util/proxy"
)

// pods/proxy, every method: a reverse proxy from the API server straight to
// the pod's IP, as kube-apiserver's ProxyREST (pkg/registry/core/pod/rest).
// The name may be "pod", "pod:port" or "scheme:pod:port"; without a port
// the pod's first declared container port is used (else the scheme's
// default). The path after /proxy (or the path query parameter) and the
// query go to the pod. As upstream, the API server must reach pod IPs:
// `orch server` runs an agent for its own node unless --disable-agent.

// newPodProxyTransport is upstream's proxy transport: pods serving HTTPS
// are not verified (they have no certificate of the cluster CA).
func newPodProxyTransport() *http.Transport {
	return &http.Transport{
		TLSClientConfig:     &tls.Config{InsecureSkipVerify: true, MinVersion: tls.VersionTLS12}, //nolint:gosec // as kube-apiserver's proxyTransport
		DialContext:         (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		TLSHandshakeTimeout: 10 * time.Second,
		MaxIdleConnsPerHost: 2,
		IdleConnTimeout:     90 * time.Second,
	}
}

func (s *Server) handlePodProxy(w http.ResponseWriter, r *http.Request, rc *reqCtx) {
	s.serveProxy(w, r, rc, s.locatePod)
}

// proxyLocator resolves the name of a proxy request ("name", "name:port" or
// "scheme:name:port") to the URL to forward to and the transport to use.
type proxyLocator func(ctx context.Context, rc *reqCtx) (*url.URL, http.RoundTripper, error)

// serveProxy is every <resource>/proxy: the path after /proxy (or the path
// query parameter) and the query go to where locate points.
func (s *Server) serveProxy(w http.ResponseWriter, r *http.Request, rc *reqCtx, locate proxyLocator) {
	target, tr, err := locate(r.Context(), rc)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	if target.Scheme == "" {
		target.Scheme = "http" // as upstream's UpgradeAwareHandler
	}
	sub := rc.info.proxyPath
	if sub == "" {
		sub = rc.query.Get("path")
	}
	// As upstream: <name>/proxy with neither a path nor a trailing slash
	// leaves the location's path empty, and UpgradeAwareHandler answers a
	// GET or HEAD with a 301 to <name>/proxy/.
	target.Path = utilnet.JoinPreservingTrailingSlash(target.Path, sub)
	target.RawQuery = r.URL.RawQuery
	s.proxyTo(w, r, target, tr)
}

// locatePod is upstream's pod ResourceLocation.
func (s *Server) locatePod(ctx context.Context, rc *reqCtx) (*url.URL, http.RoundTripper, error) {
	scheme, name, port, ok := utilnet.SplitSchemeNamePort(rc.name)
	if !ok {
		return nil, nil, badRequestf("invalid pod request %q", rc.name)
	}
	obj, _, err := s.getStored(ctx, rc.res, rc.ns, name)
	if err != nil {
		return nil, nil, err
	}
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return nil, nil, fmt.Errorf("pods %s: stored object is %T", name, obj)
	}
	target, err := podProxyTarget(pod, scheme, port)
	return target, s.podProxy, err
}

// podProxyTarget is scheme://podIP[:port] (upstream's ResourceLocation).
func podProxyTarget(pod *corev1.Pod, scheme, port string) (*url.URL, error) {
	if port == "" {
		for _, c := range pod.Spec.Containers {
			if len(c.Ports) > 0 {
				port = fmt.Sprint(c.Ports[0].ContainerPort)
				break
			}
		}
	}
	ip := net.ParseIP(pod.Status.PodIP)
	if ip == nil || !ip.IsGlobalUnicast() {
		return nil, badRequestf("address not allowed")
	}
	host := pod.Status.PodIP
	if port != "" {
		host = net.JoinHostPort(host, port)
	} else if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	if scheme == "" {
		scheme = "http"
	}
	return &url.URL{Scheme: scheme, Host: host}, nil
}

// proxyTo forwards a request to target through upstream's
// UpgradeAwareHandler, as kube-apiserver's pods, services and nodes proxies
// do: HTML links in answers are rewritten to go through the proxy again,
// X-Forwarded-* is set, upgrades (WebSocket, SPDY) pass through. The
// client's credentials and impersonation headers stay here.
func (s *Server) proxyTo(w http.ResponseWriter, r *http.Request, target *url.URL, tr http.RoundTripper) {
	out := r.Clone(r.Context())
	out.Header.Del("Authorization")
	for k := range out.Header {
		if strings.HasPrefix(k, "Impersonate-") {
			out.Header.Del(k)
		}
	}
	h := proxy.NewUpgradeAwareHandler(target, tr, true, false, proxyResponder{s})
	h.ServeHTTP(w, out)
}

// proxyResponder answers a failed proxy request with a Status.
type proxyResponder struct{ s *Server }

func (p proxyResponder) Error(w http.ResponseWriter, r *http.Request, err error) {
	p.s.writeError(w, r, dialError(err))
}
