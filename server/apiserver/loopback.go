package apiserver

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync"

	"github.com/orch/orch/server/auth"
)

// LoopbackUser is the identity of in-process clients.
const LoopbackUser = "system:apiserver"

// LoopbackTransport returns a RoundTripper that calls the handler in-process
// as user "system:apiserver" in group "system:masters", for in-process
// controllers: rest.Config{Host: "http://orch-loopback", Transport: s.LoopbackTransport()}.
// Responses stream (watches work); closing the body ends the request.
func (s *Server) LoopbackTransport() http.RoundTripper {
	return &loopbackTransport{h: s.handler, user: &auth.User{Name: LoopbackUser, Groups: []string{"system:masters"}}}
}

var (
	_ http.RoundTripper = (*loopbackTransport)(nil)
	_ http.Flusher      = (*pipeResponseWriter)(nil)
	_ http.Flusher      = (*statusRecorder)(nil)
)

type loopbackTransport struct {
	h    http.Handler
	user *auth.User
}

func (t *loopbackTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx, cancel := context.WithCancel(req.Context())
	r := req.Clone(context.WithValue(ctx, loopbackKey{}, t.user))
	if r.Body == nil {
		r.Body = http.NoBody
	}
	r.RequestURI = req.URL.RequestURI()
	r.RemoteAddr = "127.0.0.1:0"
	pr, pw := io.Pipe()
	rw := &pipeResponseWriter{header: http.Header{}, pw: pw, ready: make(chan struct{})}
	go func() {
		defer func() {
			if p := recover(); p != nil {
				_ = pw.CloseWithError(fmt.Errorf("loopback handler panic: %v", p))
			}
			rw.finish()
		}()
		t.h.ServeHTTP(rw, r)
	}()
	select {
	case <-rw.ready:
	case <-ctx.Done():
		cancel()
		_ = pr.Close()
		return nil, ctx.Err()
	}
	resp := &http.Response{
		StatusCode: rw.code, Status: fmt.Sprintf("%d %s", rw.code, http.StatusText(rw.code)),
		Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: rw.sent, Body: &loopbackBody{PipeReader: pr, cancel: cancel}, Request: req, ContentLength: -1,
	}
	if n, err := strconv.ParseInt(rw.sent.Get("Content-Length"), 10, 64); err == nil {
		resp.ContentLength = n
	}
	return resp, nil
}

// pipeResponseWriter hands the response to RoundTrip once headers are written.
type pipeResponseWriter struct {
	header http.Header
	sent   http.Header
	code   int
	pw     *io.PipeWriter
	once   sync.Once
	ready  chan struct{}
}

func (w *pipeResponseWriter) Header() http.Header { return w.header }

func (w *pipeResponseWriter) WriteHeader(code int) {
	w.once.Do(func() {
		w.code, w.sent = code, w.header.Clone()
		close(w.ready)
	})
}

func (w *pipeResponseWriter) Write(b []byte) (int, error) {
	w.WriteHeader(http.StatusOK)
	return w.pw.Write(b)
}

// Flush sends the headers; written data is already in the pipe.
func (w *pipeResponseWriter) Flush() { w.WriteHeader(http.StatusOK) }

func (w *pipeResponseWriter) finish() {
	w.WriteHeader(http.StatusOK)
	_ = w.pw.Close()
}

// loopbackBody ends the in-process request when the client closes the body.
type loopbackBody struct {
	*io.PipeReader
	cancel context.CancelFunc
}

func (b *loopbackBody) Close() error {
	b.cancel()
	return b.PipeReader.Close()
}
