package prober

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	clocktesting "k8s.io/utils/clock/testing"
)

func TestResolvePort(t *testing.T) {
	c := &v1.Container{Name: "web", Ports: []v1.ContainerPort{{Name: "http", ContainerPort: 8080}}}
	tests := []struct {
		name    string
		port    intstr.IntOrString
		want    int
		wantErr bool
	}{
		{"number", intstr.FromInt32(80), 80, false},
		{"named", intstr.FromString("http"), 8080, false},
		{"number as string", intstr.FromString("9090"), 9090, false},
		{"unknown name", intstr.FromString("grpc"), 0, true},
		{"zero", intstr.FromInt32(0), 0, true},
		{"too big", intstr.FromInt32(70000), 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ResolvePort(tt.port, c)
			if (err != nil) != tt.wantErr || got != tt.want {
				t.Fatalf("ResolvePort(%v) = %d, %v; want %d, err %v", tt.port, got, err, tt.want, tt.wantErr)
			}
		})
	}
}

func TestNewHTTPGetRequest(t *testing.T) {
	c := &v1.Container{Name: "web", Ports: []v1.ContainerPort{{Name: "http", ContainerPort: 8080}}}
	tests := []struct {
		name        string
		action      v1.HTTPGetAction
		podIP       string
		wantURL     string
		wantHost    string
		wantHeaders map[string]string
		wantErr     error
	}{
		{name: "defaults", action: v1.HTTPGetAction{Path: "/healthz", Port: intstr.FromString("http")}, podIP: "10.42.0.5",
			wantURL: "http://10.42.0.5:8080/healthz", wantHeaders: map[string]string{"User-Agent": "kube-probe/1.37", "Accept": "*/*"}},
		{name: "https, host and query", action: v1.HTTPGetAction{Scheme: v1.URISchemeHTTPS, Host: "example.test", Path: "/a?b=c", Port: intstr.FromInt32(443)},
			podIP: "10.42.0.5", wantURL: "https://example.test:443/a?b=c"},
		{name: "ipv6 pod", action: v1.HTTPGetAction{Path: "/", Port: intstr.FromInt32(80)}, podIP: "fd00::5", wantURL: "http://[fd00::5]:80/"},
		{name: "headers", action: v1.HTTPGetAction{Port: intstr.FromInt32(80), HTTPHeaders: []v1.HTTPHeader{
			{Name: "user-agent", Value: "mine"}, {Name: "Host", Value: "vhost.test"}, {Name: "X-Custom", Value: "1"}, {Name: "Accept", Value: ""}}},
			podIP: "10.42.0.5", wantURL: "http://10.42.0.5:80", wantHost: "vhost.test",
			wantHeaders: map[string]string{"User-Agent": "mine", "X-Custom": "1", "Accept": ""}},
		{name: "no pod IP", action: v1.HTTPGetAction{Port: intstr.FromInt32(80)}, wantErr: errNoHost},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, err := NewHTTPGetRequest(context.Background(), &tt.action, c, tt.podIP, "probe")
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("err %v, want %v", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if req.URL.String() != tt.wantURL || req.Host != tt.wantHost {
				t.Fatalf("url %s host %q, want %s %q", req.URL, req.Host, tt.wantURL, tt.wantHost)
			}
			for k, v := range tt.wantHeaders {
				if got := req.Header.Get(k); got != v {
					t.Errorf("header %s = %q, want %q", k, got, v)
				}
			}
		})
	}
}

// serverPort is the loopback server's port as a probe port.
func serverPort(t *testing.T, srv *httptest.Server) intstr.IntOrString {
	t.Helper()
	u, err := url.Parse(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	p, _ := strconv.Atoi(u.Port())
	return intstr.FromInt32(int32(p))
}

func TestProbeHTTP(t *testing.T) {
	checkNoLeaks(t)
	mux := http.NewServeMux()
	mux.HandleFunc("/ok", func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte("fine")) })
	mux.HandleFunc("/fail", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(500) })
	mux.HandleFunc("/notfound", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(404) })
	mux.HandleFunc("/same", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/ok", http.StatusFound) })
	mux.HandleFunc("/other", func(w http.ResponseWriter, r *http.Request) {
		// same port, another host name: kubelet does not follow it
		_, port, _ := net.SplitHostPort(r.Host)
		http.Redirect(w, r, "http://localhost:"+port+"/ok", http.StatusFound)
	})
	mux.HandleFunc("/headers", func(w http.ResponseWriter, r *http.Request) {
		if r.UserAgent() != "kube-probe/1.37" || r.Header.Get("X-Token") != "abc" || r.Host != "vhost.test" {
			w.WriteHeader(400)
		}
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	tls := httptest.NewTLSServer(mux) // self-signed: probes skip verification
	t.Cleanup(tls.Close)

	client := NewHTTPClient()
	tests := []struct {
		name    string
		srv     *httptest.Server
		scheme  v1.URIScheme
		path    string
		headers []v1.HTTPHeader
		want    outcome
		wantMsg string
	}{
		{name: "200", srv: srv, path: "/ok", want: outSuccess, wantMsg: "fine"},
		{name: "500", srv: srv, path: "/fail", want: outFailure, wantMsg: "HTTP probe failed with statuscode: 500"},
		{name: "404", srv: srv, path: "/notfound", want: outFailure, wantMsg: "HTTP probe failed with statuscode: 404"},
		{name: "same-host redirect followed", srv: srv, path: "/same", want: outSuccess, wantMsg: "fine"},
		{name: "other-host redirect not followed", srv: srv, path: "/other", want: outWarning,
			wantMsg: "Probe terminated redirects, Response body: <a href=\"http://localhost:" + strconv.Itoa(int(serverPort(t, srv).IntVal)) + "/ok\">Found</a>.\n\n"},
		{name: "headers", srv: srv, path: "/headers", want: outSuccess,
			headers: []v1.HTTPHeader{{Name: "X-Token", Value: "abc"}, {Name: "Host", Value: "vhost.test"}}},
		{name: "https self-signed", srv: tls, scheme: v1.URISchemeHTTPS, path: "/ok", want: outSuccess, wantMsg: "fine"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := &v1.HTTPGetAction{Scheme: tt.scheme, Path: tt.path, Port: serverPort(t, tt.srv), HTTPHeaders: tt.headers}
			got, msg, err := probeHTTP(context.Background(), client, a, &v1.Container{}, "127.0.0.1")
			if err != nil || got != tt.want || (tt.wantMsg != "" && msg != tt.wantMsg) {
				t.Fatalf("probeHTTP = %v, %q, %v; want %v, %q", got, msg, err, tt.want, tt.wantMsg)
			}
		})
	}
}

func TestProbeHTTPRefusedAndTimeout(t *testing.T) {
	checkNoLeaks(t)
	release := make(chan struct{})
	arrived := make(chan struct{}, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		arrived <- struct{}{}
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(release) })

	fc := clocktesting.NewFakeClock(t0)
	ctx, cancel := withClockTimeout(context.Background(), fc, time.Second)
	defer cancel()
	type res struct {
		out outcome
		msg string
	}
	done := make(chan res, 1)
	a := &v1.HTTPGetAction{Path: "/slow", Port: serverPort(t, srv)}
	go func() {
		out, msg, _ := probeHTTP(ctx, NewHTTPClient(), a, &v1.Container{}, "127.0.0.1")
		done <- res{out, msg}
	}()
	<-arrived
	fc.Step(time.Second)
	r := <-done
	want := `Get "` + srv.URL + `/slow": context deadline exceeded (Client.Timeout exceeded while awaiting headers)`
	if r.out != outFailure || r.msg != want {
		t.Fatalf("slow: %v %q, want %q", r.out, r.msg, want)
	}

	port := freePort(t)
	out, msg, err := probeHTTP(context.Background(), NewHTTPClient(),
		&v1.HTTPGetAction{Port: intstr.FromInt32(int32(port))}, &v1.Container{}, "127.0.0.1")
	if err != nil || out != outFailure || msg == "" {
		t.Fatalf("refused: %v %q %v", out, msg, err)
	}
}

// freePort is a loopback port nothing listens on (closed right away).
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	_ = l.Close()
	return port
}

func TestProbeTCP(t *testing.T) {
	checkNoLeaks(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Close() })
	var accepted atomic.Int32
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			accepted.Add(1)
			_ = c.Close()
		}
	}()
	open := l.Addr().(*net.TCPAddr).Port
	c := &v1.Container{Ports: []v1.ContainerPort{{Name: "db", ContainerPort: int32(open)}}}
	tests := []struct {
		name string
		port intstr.IntOrString
		want outcome
	}{
		{"open named port", intstr.FromString("db"), outSuccess},
		{"closed port", intstr.FromInt32(int32(freePort(t))), outFailure},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, msg, err := probeTCP(context.Background(), &v1.TCPSocketAction{Port: tt.port}, c, "127.0.0.1")
			if err != nil || got != tt.want {
				t.Fatalf("probeTCP = %v %q %v, want %v", got, msg, err, tt.want)
			}
		})
	}
	if _, _, err := probeTCP(context.Background(), &v1.TCPSocketAction{Port: intstr.FromString("nope")}, c, "127.0.0.1"); err == nil {
		t.Fatal("unknown named port: no error")
	}
}

func TestProbeExec(t *testing.T) {
	boom := errors.New("boom")
	tests := []struct {
		name    string
		code    int
		out     string
		err     error
		want    outcome
		wantMsg string
		wantErr bool
	}{
		{name: "exit 0", code: 0, out: "ok", want: outSuccess, wantMsg: "ok"},
		{name: "exit 1", code: 1, out: "bad", want: outFailure, wantMsg: "bad"},
		{name: "runtime error", code: -1, err: boom, want: outFailure, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			exec := func(context.Context, string, []string) (int, []byte, error) { return tt.code, []byte(tt.out), tt.err }
			got, msg, err := probeExec(context.Background(), exec, "id", []string{"check"}, time.Second)
			if got != tt.want || msg != tt.wantMsg || (err != nil) != tt.wantErr {
				t.Fatalf("probeExec = %v %q %v", got, msg, err)
			}
			if tt.wantErr && !errors.Is(err, boom) {
				t.Fatalf("error %v does not wrap the runtime's", err)
			}
		})
	}
}
