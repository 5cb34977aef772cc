package dns

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/miekg/dns"
)

// errNoUpstream is returned when the host has no usable nameserver.
var errNoUpstream = errors.New("no upstream nameserver (the host's resolv.conf names none but us)")

// forwarder sends queries outside the cluster domain to the host's
// nameservers, in order, retrying over TCP when the UDP answer is truncated.
type forwarder struct {
	ups      *upstreams
	udp, tcp *dns.Client
}

func newForwarder(ups *upstreams, timeout time.Duration) *forwarder {
	return &forwarder{ups: ups,
		udp: &dns.Client{Net: "udp", Timeout: timeout, UDPSize: dns.DefaultMsgSize},
		tcp: &dns.Client{Net: "tcp", Timeout: timeout}}
}

// exchange forwards req (TCP from the start when the client used TCP) and
// returns the first answer any upstream gives.
func (f *forwarder) exchange(ctx context.Context, req *dns.Msg, viaTCP bool) (*dns.Msg, error) {
	servers := f.ups.list()
	if len(servers) == 0 {
		return nil, errNoUpstream
	}
	var errs []error
	for _, s := range servers {
		resp, err := f.exchangeOne(ctx, req, s, viaTCP)
		if err == nil {
			return resp, nil
		}
		errs = append(errs, fmt.Errorf("%s: %w", s, err))
		if ctx.Err() != nil {
			break
		}
	}
	return nil, errors.Join(errs...)
}

func (f *forwarder) exchangeOne(ctx context.Context, req *dns.Msg, server string, viaTCP bool) (*dns.Msg, error) {
	if !viaTCP {
		resp, _, err := f.udp.ExchangeContext(ctx, req, server)
		if err != nil || !resp.Truncated {
			return resp, err
		}
	}
	resp, _, err := f.tcp.ExchangeContext(ctx, req, server)
	return resp, err
}
