package kubeletapi

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"testing"

	"k8s.io/apimachinery/pkg/util/httpstream"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/portforward"
	"k8s.io/client-go/transport/spdy"
)

// echoServer answers each line with "echo: <line>" on loopback.
func echoServer(t *testing.T) int {
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
			go func() {
				defer c.Close()
				sc := bufio.NewScanner(c)
				for sc.Scan() {
					fmt.Fprintf(c, "echo: %s\n", sc.Text())
				}
			}()
		}
	}()
	return ln.Addr().(*net.TCPAddr).Port
}

func pfDialer(t *testing.T, cfg *rest.Config, kind executorKind, u *url.URL) httpstream.Dialer {
	t.Helper()
	if kind == viaWebSocket {
		d, err := portforward.NewSPDYOverWebsocketDialer(u, cfg)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	rt, up, err := spdy.RoundTripperFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return spdy.NewDialer(up, &http.Client{Transport: rt}, http.MethodPost, u)
}

// forwardAndTalk forwards a local port to remote and exchanges two lines
// over two connections.
func forwardAndTalk(t *testing.T, d httpstream.Dialer, remote int) {
	t.Helper()
	stop, ready := make(chan struct{}), make(chan struct{})
	pf, err := portforward.NewOnAddresses(d, []string{"127.0.0.1"}, []string{"0:" + strconv.Itoa(remote)}, stop, ready, io.Discard, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	errc := make(chan error, 1)
	go func() { errc <- pf.ForwardPorts() }()
	defer func() { close(stop); <-errc }()
	select {
	case <-ready:
	case err := <-errc:
		t.Fatalf("forward: %v", err)
	}
	ports, err := pf.GetPorts()
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2; i++ {
		c, err := net.Dial("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(int(ports[0].Local))))
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(c, "ping %d\n", i)
		line, err := bufio.NewReader(c).ReadString('\n')
		c.Close()
		if want := fmt.Sprintf("echo: ping %d\n", i); err != nil || line != want {
			t.Fatalf("got %q %v, want %q", line, err, want)
		}
	}
}

func TestPortForward(t *testing.T) {
	e := newTestEnv(t)
	remote := echoServer(t)
	u, _ := url.Parse(e.base + "/portForward/default/web")
	for _, kind := range []executorKind{viaSPDY, viaWebSocket} {
		t.Run(string(kind), func(t *testing.T) { forwardAndTalk(t, pfDialer(t, e.rest, kind, u), remote) })
	}
}
