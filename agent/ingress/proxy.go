package ingress

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"sync"
	"syscall"
	"time"

	"go.uber.org/zap"
)

type backendKey struct{}

// handler routes each request through the current Table and proxies it.
type handler struct {
	table func() *Table
	proxy *httputil.ReverseProxy
	log   *zap.Logger
}

func newHandler(table func() *Table, log *zap.Logger) *handler {
	base := &http.Transport{
		DialContext:         (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConnsPerHost: 64, IdleConnTimeout: 90 * time.Second, ExpectContinueTimeout: time.Second,
		// Pass the client's Accept-Encoding and the backend's encoding
		// through untouched (no gzip added and undone here).
		DisableCompression: true,
	}
	h := &handler{table: table, log: log}
	h.proxy = &httputil.ReverseProxy{
		Rewrite:    rewrite,
		Transport:  &retrying{base: base},
		BufferPool: &bufferPool{},
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			if !errors.Is(err, context.Canceled) {
				log.Debug("ingress backend failed", zap.String("host", r.Host), zap.String("path", r.URL.Path), zap.Error(err))
			}
			http.Error(w, "502 bad gateway: the backend did not answer", http.StatusBadGateway)
		},
	}
	return h
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, ok := h.table().Route(r.Host, r.URL.Path)
	switch {
	case !ok:
		http.Error(w, "404 page not found: no Ingress rule matches "+r.Host+r.URL.Path, http.StatusNotFound)
		return
	case len(b.Addrs) == 0:
		http.Error(w, "503 service unavailable: no ready endpoint for "+b.Name, http.StatusServiceUnavailable)
		return
	}
	h.proxy.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), backendKey{}, b)))
}

// rewrite sends the request to an endpoint of its backend, keeping the
// client's Host and setting X-Forwarded-For, -Host and -Proto.
func rewrite(pr *httputil.ProxyRequest) {
	b, _ := pr.In.Context().Value(backendKey{}).(*Backend)
	pr.Out.URL.Scheme = "http"
	if b != nil {
		pr.Out.URL.Host = b.Pick()
	}
	pr.Out.Host = pr.In.Host
	pr.SetXForwarded()
}

// retrying sends a request without a body to another endpoint of its
// backend when the chosen one refuses the connection (a pod that has just
// stopped while its EndpointSlice still lists it) or, for an idempotent
// method, resets or closes it before answering (a pod stopping while the
// request was in flight), as nginx's proxy_next_upstream does by default.
type retrying struct{ base http.RoundTripper }

func (t *retrying) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.base.RoundTrip(req)
	b, _ := req.Context().Value(backendKey{}).(*Backend)
	if err == nil || b == nil || !retriable(req, err) {
		return resp, err
	}
	tried := map[string]bool{req.URL.Host: true}
	for _, addr := range b.Addrs {
		if tried[addr] {
			continue
		}
		tried[addr] = true
		again := req.Clone(req.Context())
		again.URL.Host = addr
		if resp, err = t.base.RoundTrip(again); err == nil || !retriable(again, err) {
			return resp, err
		}
	}
	return resp, err
}

// retriable: the request has no body and either nothing reached the
// endpoint or the method is idempotent and the endpoint dropped the
// connection before any response header.
func retriable(req *http.Request, err error) bool {
	if req.Body != nil && req.Body != http.NoBody || req.Context().Err() != nil {
		return false
	}
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" {
		return true
	}
	return idempotent(req.Method) &&
		(errors.Is(err, syscall.ECONNRESET) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF))
}

// idempotent methods (RFC 9110 9.2.2).
func idempotent(method string) bool {
	switch method {
	case http.MethodGet, http.MethodHead, http.MethodOptions, http.MethodTrace, http.MethodPut, http.MethodDelete:
		return true
	}
	return false
}

// bufferPool reuses the proxy's copy buffers (without one, ReverseProxy
// allocates 32 KiB per response).
type bufferPool struct{ p sync.Pool }

func (b *bufferPool) Get() []byte {
	if v, ok := b.p.Get().(*[]byte); ok {
		return *v
	}
	return make([]byte, 32<<10)
}

func (b *bufferPool) Put(buf []byte) { b.p.Put(&buf) }
