package prober

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/orch/orch/agent/runtime"
	"google.golang.org/grpc"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// TestHTTPReadinessThroughManager: a real loopback server answering 500 then
// 200, probed on a named container port.
func TestHTTPReadinessThroughManager(t *testing.T) {
	h := newHarness(t)
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if hits.Add(1) == 1 {
			w.WriteHeader(http.StatusInternalServerError)
		}
	}))
	t.Cleanup(srv.Close)
	port := serverPort(t, srv)
	pod := testPod(v1.Container{Name: "web",
		Ports: []v1.ContainerPort{{Name: "http", ContainerPort: port.IntVal}},
		ReadinessProbe: &v1.Probe{
			ProbeHandler:  v1.ProbeHandler{HTTPGet: &v1.HTTPGetAction{Path: "/ready", Port: intstr.FromString("http")}},
			PeriodSeconds: 5, TimeoutSeconds: 1, SuccessThreshold: 1, FailureThreshold: 1,
		},
	})
	h.m.AddPod(pod, map[string]string{"web": "id1"}, "127.0.0.1")
	h.idle(1)
	if hits.Load() != 1 || h.m.Readiness(uid, "web") {
		t.Fatalf("hits %d, ready %v", hits.Load(), h.m.Readiness(uid, "web"))
	}
	h.noUpdate() // Failure is readiness' initial result
	h.hasEvent("Warning Unhealthy Readiness probe failed: HTTP probe failed with statuscode: 500")
	h.fc.Step(5 * time.Second)
	h.update(Readiness, Success)
	h.idle(1)
	if !h.m.Readiness(uid, "web") {
		t.Fatal("not ready after a 200")
	}
}

func TestProbeGRPC(t *testing.T) {
	checkNoLeaks(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs := health.NewServer()
	hs.SetServingStatus("down", healthpb.HealthCheckResponse_NOT_SERVING)
	gs := grpc.NewServer()
	healthpb.RegisterHealthServer(gs, hs)
	go func() { _ = gs.Serve(l) }()
	t.Cleanup(gs.Stop)
	bare := grpc.NewServer() // no health service
	bl, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = bare.Serve(bl) }()
	t.Cleanup(bare.Stop)

	port := int32(l.Addr().(*net.TCPAddr).Port)
	down := "down"
	tests := []struct {
		name    string
		action  v1.GRPCAction
		want    outcome
		wantMsg string
	}{
		{"serving", v1.GRPCAction{Port: port}, outSuccess, "service healthy"},
		{"not serving", v1.GRPCAction{Port: port, Service: &down}, outFailure, `service unhealthy (responded with "NOT_SERVING")`},
		{"unimplemented", v1.GRPCAction{Port: int32(bl.Addr().(*net.TCPAddr).Port)}, outFailure,
			"error: this server does not implement the grpc health protocol (grpc.health.v1.Health): unknown service grpc.health.v1.Health"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), waitFor)
			defer cancel()
			got, msg, err := probeGRPC(ctx, &tt.action, "127.0.0.1", time.Second)
			if err != nil || got != tt.want || msg != tt.wantMsg {
				t.Fatalf("probeGRPC = %v %q %v; want %v %q", got, msg, err, tt.want, tt.wantMsg)
			}
		})
	}
}

func TestExecFromRuntime(t *testing.T) {
	rt := runtime.NewFake()
	ctx := context.Background()
	if err := rt.CreateContainer(ctx, runtime.ContainerSpec{ID: "c1", Name: "c"}); err != nil {
		t.Fatal(err)
	}
	if err := rt.StartContainer(ctx, "c1"); err != nil {
		t.Fatal(err)
	}
	rt.ExecFunc = func(id string, req runtime.ExecRequest) (int, error) {
		_, _ = req.Stdout.Write([]byte("out "))
		_, _ = req.Stderr.Write(make([]byte, 2*maxOutput))
		return 3, nil
	}
	code, out, err := ExecFromRuntime(rt)(ctx, "c1", []string{"check"})
	if err != nil || code != 3 || len(out) != maxOutput || string(out[:4]) != "out " {
		t.Fatalf("exec = %d, %d bytes, %v", code, len(out), err)
	}
	if _, _, err := ExecFromRuntime(rt)(ctx, "missing", []string{"check"}); err == nil {
		t.Fatal("exec in a missing container succeeded")
	}
}
