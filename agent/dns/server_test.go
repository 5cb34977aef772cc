package dns

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/miekg/dns"
	"go.uber.org/zap/zaptest"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// fakeUpstream is a nameserver on loopback answering example.org and a
// big TXT set that only fits over TCP.
type fakeUpstream struct {
	addr string
	tcp  atomic.Int32 // queries received over TCP
}

func startUpstream(t *testing.T) *fakeUpstream {
	t.Helper()
	u := &fakeUpstream{}
	pc, ln := listenPair(t, "127.0.0.1")
	u.addr = pc.LocalAddr().String()
	h := dns.HandlerFunc(func(w dns.ResponseWriter, r *dns.Msg) {
		m := new(dns.Msg)
		m.SetReply(r)
		q := r.Question[0]
		switch {
		case q.Name == "example.org." && q.Qtype == dns.TypeA:
			m.Answer = []dns.RR{&dns.A{Hdr: dns.RR_Header{Name: q.Name, Rrtype: dns.TypeA, Class: dns.ClassINET, Ttl: 60}, A: net.IPv4(192, 0, 2, 1)}}
		case q.Name == "big.example.org.":
			for i := range 40 {
				m.Answer = append(m.Answer, &dns.TXT{Hdr: dns.RR_Header{Name: q.Name, Rrtype: dns.TypeTXT, Class: dns.ClassINET, Ttl: 60},
					Txt: []string{fmt.Sprintf("record %02d padded to make the answer large", i)}})
			}
		default:
			m.Rcode = dns.RcodeNameError
		}
		if w.LocalAddr().Network() == "tcp" {
			u.tcp.Add(1)
		} else {
			m.Truncate(dns.MinMsgSize)
		}
		_ = w.WriteMsg(m)
	})
	for _, s := range []*dns.Server{{PacketConn: pc, Handler: h}, {Listener: ln, Handler: h}} {
		started := make(chan struct{})
		s.NotifyStartedFunc = func() { close(started) }
		go func() { _ = s.ActivateAndServe() }()
		<-started
		t.Cleanup(func() { _ = s.Shutdown() })
	}
	return u
}

// listenPair binds UDP and TCP on the same free port of ip.
func listenPair(t *testing.T, ip string) (net.PacketConn, net.Listener) {
	t.Helper()
	for range 20 {
		pc, err := net.ListenPacket("udp", net.JoinHostPort(ip, "0"))
		if err != nil {
			t.Fatal(err)
		}
		ln, err := net.Listen("tcp", pc.LocalAddr().String())
		if err == nil {
			return pc, ln
		}
		_ = pc.Close()
	}
	t.Fatal("no free UDP+TCP port pair on loopback")
	return nil, nil
}

// freePort is a port free for both UDP and TCP on ip (released again).
func freePort(t *testing.T, ip string) int {
	pc, ln := listenPair(t, ip)
	port := ln.Addr().(*net.TCPAddr).Port
	_ = pc.Close()
	_ = ln.Close()
	return port
}

func TestServerOnLoopback(t *testing.T) {
	up := startUpstream(t)
	c := fakeCluster(t)
	port := freePort(t, "127.0.0.1")
	srv, err := New(Config{Client: c, ClusterDNS: "127.0.0.1", Port: port, Upstreams: []string{up.addr},
		Timeout: time.Second, Logger: zaptest.NewLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	})
	select {
	case <-srv.Ready():
	case err := <-done:
		t.Fatalf("Run ended early: %v", err)
	case <-time.After(30 * time.Second):
		t.Fatal("server not ready")
	}
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	for _, network := range []string{"udp", "tcp"} {
		t.Run(network, func(t *testing.T) { serverQueries(t, &dns.Client{Net: network, Timeout: 5 * time.Second}, addr, up) })
	}
	t.Run("events", func(t *testing.T) { serverFollowsEvents(t, c, addr) })
}

func serverQueries(t *testing.T, cl *dns.Client, addr string, up *fakeUpstream) {
	for _, tc := range []struct {
		name  string
		qtype uint16
		rcode int
		n     int
	}{
		{"kubernetes.default.svc.cluster.local.", dns.TypeA, dns.RcodeSuccess, 1},
		{"db.default.svc.cluster.local.", dns.TypeA, dns.RcodeSuccess, 3},
		{"unknown.default.svc.cluster.local.", dns.TypeA, dns.RcodeNameError, 0},
		{"example.org.", dns.TypeA, dns.RcodeSuccess, 1},
		{"missing.example.org.", dns.TypeA, dns.RcodeNameError, 0},
		{"ext.default.svc.cluster.local.", dns.TypeA, dns.RcodeSuccess, 2}, // CNAME + the target's A
	} {
		r, _, err := cl.Exchange(query(tc.name, tc.qtype), addr)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if r.Rcode != tc.rcode || len(r.Answer) != tc.n {
			t.Errorf("%s: rcode %s with %d answers %v, want %s with %d", tc.name, dns.RcodeToString[r.Rcode],
				len(r.Answer), rrs(r.Answer), dns.RcodeToString[tc.rcode], tc.n)
		}
	}
	// A big upstream answer: the upstream truncates over UDP, orch retries
	// over TCP and hands the whole answer to an EDNS0 client.
	before := up.tcp.Load()
	q := query("big.example.org.", dns.TypeTXT)
	q.SetEdns0(4096, false)
	r, _, err := cl.Exchange(q, addr)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Answer) != 40 || r.Truncated || up.tcp.Load() == before {
		t.Errorf("big answer: %d records, truncated %v, upstream TCP queries %d -> %d", len(r.Answer), r.Truncated, before, up.tcp.Load())
	}
	if cl.Net == "udp" { // without EDNS0 the client gets TC and would retry over TCP
		r, _, err := cl.Exchange(query("big.example.org.", dns.TypeTXT), addr)
		if err != nil || !r.Truncated {
			t.Errorf("512-byte UDP client: truncated=%v err=%v", r != nil && r.Truncated, err)
		}
	}
}

// serverFollowsEvents: a Service created after the start resolves, and
// stops resolving once deleted.
func serverFollowsEvents(t *testing.T, c *fakeClient, addr string) {
	ctx := context.Background()
	if _, err := c.CoreV1().Services("default").Create(ctx, svc("default", "late", "10.43.9.9"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitRcode(t, addr, "late.default.svc.cluster.local.", dns.RcodeSuccess)
	if err := c.CoreV1().Services("default").Delete(ctx, "late", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitRcode(t, addr, "late.default.svc.cluster.local.", dns.RcodeNameError)
}

func waitRcode(t *testing.T, addr, name string, rcode int) {
	t.Helper()
	cl := &dns.Client{Timeout: time.Second}
	deadline := time.Now().Add(10 * time.Second)
	var last error = errors.New("no answer")
	for time.Now().Before(deadline) {
		r, _, err := cl.Exchange(query(name, dns.TypeA), addr)
		if err == nil && r.Rcode == rcode {
			return
		}
		if err == nil {
			last = fmt.Errorf("rcode %s", dns.RcodeToString[r.Rcode])
		} else {
			last = err
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("%s never answered %s: %v", name, dns.RcodeToString[rcode], last)
}
