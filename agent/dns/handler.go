package dns

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/miekg/dns"
	"go.uber.org/zap"
)

// handler answers the cluster domain from the zone and forwards the rest.
type handler struct {
	zone    *Zone
	fwd     *forwarder
	log     *zap.Logger
	timeout time.Duration
	// synced is set once the cache has its first list: before that the
	// cluster domain answers SERVFAIL (clients retry), not NXDOMAIN.
	synced atomic.Bool
}

var _ dns.Handler = (*handler)(nil)

// ServeDNS answers one query.
func (h *handler) ServeDNS(w dns.ResponseWriter, req *dns.Msg) {
	viaTCP := w.LocalAddr().Network() == "tcp"
	resp := h.resolve(req, viaTCP)
	if !viaTCP {
		resp.Truncate(udpSize(req))
	}
	if err := w.WriteMsg(resp); err != nil {
		h.log.Debug("writing a DNS answer", zap.Error(err))
	}
}

func (h *handler) resolve(req *dns.Msg, viaTCP bool) *dns.Msg {
	if len(req.Question) != 1 || req.Opcode != dns.OpcodeQuery {
		return failure(req, dns.RcodeFormatError)
	}
	if !h.synced.Load() && h.zone.inZone(req.Question[0].Name) {
		return failure(req, dns.RcodeServerFailure)
	}
	if resp := h.zone.Answer(req); resp != nil {
		h.chaseCNAME(req, resp, viaTCP)
		return withEDNS(req, resp)
	}
	ctx, cancel := context.WithTimeout(context.Background(), h.timeout)
	defer cancel()
	resp, err := h.fwd.exchange(ctx, req, viaTCP)
	if err != nil {
		h.log.Debug("forwarding failed", zap.String("name", req.Question[0].Name), zap.Error(err))
		return failure(req, dns.RcodeServerFailure)
	}
	resp.Id = req.Id
	return resp
}

// chaseCNAME adds the A/AAAA records of an ExternalName target outside the
// cluster domain (looked up upstream), as CoreDNS does, so stub resolvers
// that do not follow CNAMEs themselves get an address.
func (h *handler) chaseCNAME(req, resp *dns.Msg, viaTCP bool) {
	q := req.Question[0]
	if len(resp.Answer) != 1 || (q.Qtype != dns.TypeA && q.Qtype != dns.TypeAAAA) {
		return
	}
	c, ok := resp.Answer[0].(*dns.CNAME)
	if !ok || h.zone.inZone(c.Target) {
		return
	}
	sub := new(dns.Msg)
	sub.SetQuestion(c.Target, q.Qtype)
	sub.RecursionDesired = true
	ctx, cancel := context.WithTimeout(context.Background(), h.timeout)
	defer cancel()
	if r, err := h.fwd.exchange(ctx, sub, viaTCP); err == nil && r.Rcode == dns.RcodeSuccess {
		resp.Answer = append(resp.Answer, r.Answer...)
		resp.Ns = nil
	}
}

// udpSize is the largest UDP answer the client takes (EDNS0 or 512).
func udpSize(req *dns.Msg) int {
	if o := req.IsEdns0(); o != nil && o.UDPSize() > dns.MinMsgSize {
		return int(o.UDPSize())
	}
	return dns.MinMsgSize
}

// withEDNS adds an OPT record to answers of EDNS0 queries.
func withEDNS(req, resp *dns.Msg) *dns.Msg {
	if o := req.IsEdns0(); o != nil {
		resp.SetEdns0(max(o.UDPSize(), dns.MinMsgSize), o.Do())
	}
	return resp
}

func failure(req *dns.Msg, rcode int) *dns.Msg {
	m := new(dns.Msg)
	m.SetRcode(req, rcode)
	m.RecursionAvailable = true
	return m
}
