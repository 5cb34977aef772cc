package prober

import (
	"context"
	"fmt"
	"net"
	"strconv"

	v1 "k8s.io/api/core/v1"
)

// probeTCP succeeds when a TCP connection opens before ctx's timeout.
func probeTCP(ctx context.Context, a *v1.TCPSocketAction, c *v1.Container, podIP string) (outcome, string, error) {
	port, err := ResolvePort(a.Port, c)
	if err != nil {
		return outFailure, "", err
	}
	host, err := hostOr(a.Host, podIP)
	if err != nil {
		return outFailure, "", err
	}
	addr := net.JoinHostPort(host, strconv.Itoa(port))
	conn, err := (&net.Dialer{}).DialContext(ctx, "tcp", addr)
	if err != nil {
		if timedOut(ctx) {
			return outFailure, fmt.Sprintf("dial tcp %s: i/o timeout", addr), nil
		}
		return outFailure, err.Error(), nil
	}
	_ = conn.Close()
	return outSuccess, "", nil
}
