package dns

import (
	"context"
	"errors"
	"os"
	"runtime"
	"testing"
	"time"

	"github.com/miekg/dns"
	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"go.uber.org/zap/zaptest"
)

// inNetns runs f on a goroutine locked to its thread inside ns.
func inNetns(ns netns.NsHandle, f func() error) error {
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // not unlocked: the thread dies with the goroutine
		if err := netns.Set(ns); err != nil {
			errc <- err
			return
		}
		errc <- f()
	}()
	return <-errc
}

// TestServerOnDummyLink runs the real server as the agent does, on the
// cluster DNS IP put on a dummy interface, inside a throwaway network
// namespace (gone with the test, whatever happens).
func TestServerOnDummyLink(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("skipping: needs root (network namespaces)")
	}
	runtime.LockOSThread()
	orig, err := netns.Get()
	if err != nil {
		t.Fatal(err)
	}
	ns, err := netns.New() // this thread is now inside ns
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		ns.Close()
		if netns.Set(orig) == nil {
			runtime.UnlockOSThread()
		}
		orig.Close()
	}()
	lo, _ := netlink.LinkByName("lo")
	if err := netlink.LinkSetUp(lo); err != nil {
		t.Fatal(err)
	}
	const link = "orchtest-dns"
	srv, err := New(Config{Client: fakeCluster(t), ClusterDNS: "10.43.0.10", LinkName: link, Upstreams: []string{"127.0.0.1:1"},
		Timeout: 200 * time.Millisecond, Logger: zaptest.NewLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	qerr := make(chan error, 1)
	go func() {
		select {
		case <-srv.Ready():
		case <-time.After(30 * time.Second):
			qerr <- errors.New("not ready")
			cancel()
			return
		}
		qerr <- inNetns(ns, func() error { return dummyQueries(t) })
		cancel()
	}()
	if err := srv.Run(ctx); err != nil { // binds inside ns (this thread)
		t.Fatal(err)
	}
	if err := <-qerr; err != nil {
		t.Fatal(err)
	}
	if _, err := netlink.LinkByName(link); err == nil {
		t.Errorf("%s still exists after Run", link)
	}
}

func dummyQueries(t *testing.T) error {
	for _, network := range []string{"udp", "tcp"} {
		cl := &dns.Client{Net: network, Timeout: 2 * time.Second}
		r, _, err := cl.Exchange(query("kubernetes.default.svc.cluster.local.", dns.TypeA), "10.43.0.10:53")
		if err != nil {
			return err
		}
		if got := rrs(r.Answer); len(got) != 1 || got[0] != "A 10.43.0.1" {
			t.Errorf("%s: answer %q", network, got)
		}
		r, _, err = cl.Exchange(query("example.org.", dns.TypeA), "10.43.0.10:53")
		if err != nil {
			return err
		}
		if r.Rcode != dns.RcodeServerFailure {
			t.Errorf("%s: unreachable upstream gave %s, want SERVFAIL", network, dns.RcodeToString[r.Rcode])
		}
	}
	return nil
}
