package prober

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"
	v1 "k8s.io/api/core/v1"
)

// probeGRPC calls grpc.health.v1.Health/Check on the pod IP, without TLS, as
// kubelet does; SERVING is success.
func probeGRPC(ctx context.Context, a *v1.GRPCAction, podIP string, timeout time.Duration) (outcome, string, error) {
	if a.Port <= 0 || a.Port > 65535 {
		return outFailure, "", fmt.Errorf("invalid port number: %v", a.Port)
	}
	host, err := hostOr("", podIP)
	if err != nil {
		return outFailure, "", err
	}
	addr := net.JoinHostPort(host, strconv.Itoa(int(a.Port)))
	conn, err := grpc.NewClient(addr,
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithUserAgent("kube-probe/"+KubeVersion))
	if err != nil {
		return outFailure, fmt.Sprintf("error: failed to connect service at %q: %+v", addr, err), nil
	}
	defer conn.Close()
	service := ""
	if a.Service != nil {
		service = *a.Service
	}
	resp, err := healthpb.NewHealthClient(conn).Check(ctx, &healthpb.HealthCheckRequest{Service: service})
	if err != nil {
		return outFailure, grpcErrorMessage(ctx, addr, timeout, err), nil
	}
	if resp.GetStatus() != healthpb.HealthCheckResponse_SERVING {
		return outFailure, fmt.Sprintf("service unhealthy (responded with %q)", resp.GetStatus().String()), nil
	}
	return outSuccess, "service healthy", nil
}

// grpcErrorMessage is kubelet's text for a failed health RPC.
func grpcErrorMessage(ctx context.Context, addr string, timeout time.Duration, err error) string {
	st, _ := status.FromError(err)
	switch {
	case st.Code() == codes.Unimplemented:
		return fmt.Sprintf("error: this server does not implement the grpc health protocol (grpc.health.v1.Health): %s", st.Message())
	case timedOut(ctx):
		return fmt.Sprintf("timeout: health rpc did not complete within %v", timeout)
	case st.Code() == codes.Unavailable:
		return fmt.Sprintf("error: failed to connect service at %q: %+v", addr, err)
	}
	return fmt.Sprintf("error: health rpc probe failed: %+v", err)
}
