package ingress

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
)

// resetter accepts connections, reads one request and resets the
// connection without answering: a pod stopping with a request in flight.
func resetter(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			if req, err := http.ReadRequest(bufio.NewReader(c)); err == nil {
				_, _ = io.Copy(io.Discard, req.Body)
			}
			_ = c.(*net.TCPConn).SetLinger(0)
			c.Close()
		}
	}()
	return ln.Addr().String()
}

// refused is a loopback address nothing listens on.
func refused(t *testing.T) string {
	t.Helper()
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(freePort(t)))
}

func TestRetryingOtherEndpoint(t *testing.T) {
	p := freePort(t)
	backend(t, "good", "127.0.0.1", p)
	good := net.JoinHostPort("127.0.0.1", strconv.Itoa(p))
	tr := &retrying{base: &http.Transport{DisableKeepAlives: true}}
	for _, tc := range []struct {
		name, method, first string
		body                io.Reader
		wantErr             bool
	}{
		{name: "GET, connection refused", method: "GET", first: refused(t)},
		{name: "POST without body, connection refused", method: "POST", first: refused(t)},
		{name: "GET, reset before the answer", method: "GET", first: resetter(t)},
		{name: "DELETE, reset before the answer", method: "DELETE", first: resetter(t)},
		{name: "POST, reset before the answer", method: "POST", first: resetter(t), wantErr: true},
		{name: "PUT with a body, reset", method: "PUT", first: resetter(t), body: strings.NewReader("x"), wantErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := &Backend{Name: "default/web:80", Addrs: []string{tc.first, good}}
			ctx := context.WithValue(context.Background(), backendKey{}, b)
			req, err := http.NewRequestWithContext(ctx, tc.method, "http://"+tc.first+"/", tc.body)
			if err != nil {
				t.Fatal(err)
			}
			resp, err := tr.RoundTrip(req)
			if tc.wantErr {
				if err == nil {
					resp.Body.Close()
					t.Fatal("the request was sent to another endpoint")
				}
				return
			}
			if err != nil {
				t.Fatalf("not retried on %s: %v", good, err)
			}
			defer resp.Body.Close()
			if body, _ := io.ReadAll(resp.Body); resp.StatusCode != 200 || !strings.HasPrefix(string(body), "good ") {
				t.Fatalf("answer %d %q, want 200 from the other endpoint", resp.StatusCode, body)
			}
		})
	}
}
