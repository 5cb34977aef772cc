package dns

import (
	"net"
	"testing"
	"time"

	"github.com/miekg/dns"
	"go.uber.org/zap/zaptest"
)

// TestHandlerBeforeSync: until the cache has its first list, cluster names
// get SERVFAIL (clients retry) rather than a wrong NXDOMAIN.
func TestHandlerBeforeSync(t *testing.T) {
	c, _ := startCache(t, fixtures()...)
	h := &handler{zone: newZone("cluster.local", net.ParseIP("10.43.0.10"), c), log: zaptest.NewLogger(t), timeout: time.Second,
		fwd: newForwarder(&upstreams{fixed: []string{"127.0.0.1:1"}}, 100*time.Millisecond)}
	q := query("kubernetes.default.svc.cluster.local.", dns.TypeA)
	if r := h.resolve(q, false); r.Rcode != dns.RcodeServerFailure {
		t.Errorf("before sync: %s, want SERVFAIL", dns.RcodeToString[r.Rcode])
	}
	h.synced.Store(true)
	if r := h.resolve(q, false); r.Rcode != dns.RcodeSuccess || len(r.Answer) != 1 {
		t.Errorf("after sync: %s %v", dns.RcodeToString[r.Rcode], r.Answer)
	}
	bad := query("a.", dns.TypeA)
	bad.Question = append(bad.Question, bad.Question[0])
	if r := h.resolve(bad, false); r.Rcode != dns.RcodeFormatError {
		t.Errorf("two questions: %s, want FORMERR", dns.RcodeToString[r.Rcode])
	}
}
