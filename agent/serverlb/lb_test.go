package serverlb

import (
	"context"
	"errors"
	"io"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/zap"
	discoveryv1 "k8s.io/api/discovery/v1"
)

// listen starts a TCP server on loopback that echoes, closed at cleanup.
func listen(t *testing.T) net.Listener {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() { _, _ = io.Copy(c, c); _ = c.Close() }()
		}
	}()
	return ln
}

func TestDialFailsOverToAReachableServer(t *testing.T) {
	a, b := listen(t), listen(t)
	lb := New(a.Addr().String(), zap.NewNop())
	lb.SetServers([]string{b.Addr().String()})
	c, err := lb.DialContext(context.Background(), "tcp", "ignored:1")
	if err != nil {
		t.Fatal(err)
	}
	_ = c.Close()
	if got := lb.Servers()[0]; got != a.Addr().String() {
		t.Fatalf("current = %s, want the join server %s", got, a.Addr())
	}
	_ = a.Close()
	c, err = lb.DialContext(context.Background(), "tcp", "ignored:1")
	if err != nil {
		t.Fatalf("dial with the first server down: %v", err)
	}
	_ = c.Close()
	if got := lb.Servers(); got[0] != b.Addr().String() || len(got) != 2 {
		t.Fatalf("servers after failover = %v, want %s first and the join server kept", got, b.Addr())
	}
	_ = b.Close()
	if _, err := lb.DialContext(context.Background(), "tcp", "x:1"); err == nil {
		t.Fatal("dial with every server down succeeded")
	}
}

func TestNotReadyServerLosesItsConnections(t *testing.T) {
	a, b := listen(t), listen(t)
	lb := New(a.Addr().String(), zap.NewNop())
	lb.SetServers([]string{a.Addr().String(), b.Addr().String()})
	c, err := lb.DialContext(context.Background(), "tcp", "x:1")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var checks atomic.Int32
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go lb.Run(ctx, 20*time.Millisecond, func(_ context.Context, addr string) error {
		checks.Add(1)
		if addr == a.Addr().String() {
			return errors.New("not ready")
		}
		return nil
	})
	deadline := time.Now().Add(10 * time.Second)
	for lb.Servers()[0] != b.Addr().String() {
		if time.Now().After(deadline) {
			t.Fatal("no failover away from a server that is not ready")
		}
		time.Sleep(10 * time.Millisecond)
	}
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.Read(make([]byte, 1)); err == nil {
		t.Fatal("the connection to the old server is still open")
	}
	time.Sleep(100 * time.Millisecond)
	if lb.Servers()[0] != b.Addr().String() {
		t.Fatalf("flapped back to %s", lb.Servers()[0])
	}
}

func TestSliceAddrs(t *testing.T) {
	yes, no, port, name := true, false, int32(6443), "https"
	s := &discoveryv1.EndpointSlice{
		Ports: []discoveryv1.EndpointPort{{Name: &name, Port: &port}},
		Endpoints: []discoveryv1.Endpoint{
			{Addresses: []string{"10.0.0.1"}, Conditions: discoveryv1.EndpointConditions{Ready: &yes}},
			{Addresses: []string{"10.0.0.2"}, Conditions: discoveryv1.EndpointConditions{Ready: &no}},
			{Addresses: []string{"10.0.0.3"}},
		},
	}
	got := sliceAddrs(s)
	if len(got) != 2 || got[0] != "10.0.0.1:6443" || got[1] != "10.0.0.3:6443" {
		t.Fatalf("sliceAddrs = %v", got)
	}
}

func TestPersistKeepsServersAcrossRestarts(t *testing.T) {
	path := t.TempDir() + "/servers.json"
	a := New("10.0.0.1:6443", zap.NewNop())
	a.Persist(path)
	a.SetServers([]string{"10.0.0.1:6443", "10.0.0.2:6443", "10.0.0.3:6443"})
	b := New("10.0.0.1:6443", zap.NewNop())
	b.Persist(path)
	if got := b.Servers(); len(got) != 3 || got[0] != "10.0.0.1:6443" {
		t.Fatalf("servers after a restart = %v, want the join server first and the two others kept", got)
	}
}
