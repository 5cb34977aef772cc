package kubeletapi

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/orch/orch/agent/runtime"
)

type fakeReviews struct{}

func (fakeReviews) ReviewToken(_ context.Context, tok string) (Caller, bool, error) {
	switch tok {
	case "metrics":
		return Caller{Name: "system:serviceaccount:kube-system:metrics-server"}, true, nil
	case "nobody":
		return Caller{Name: "nobody"}, true, nil
	case "proxy":
		return Caller{Name: "proxy-user"}, true, nil
	case "logs":
		return Caller{Name: "log-reader"}, true, nil
	}
	return Caller{}, false, nil
}

func (fakeReviews) Allowed(_ context.Context, c Caller, verb, sub string) (bool, error) {
	if c.Name == "proxy-user" {
		return verb == "get" && sub == "proxy", nil
	}
	if c.Name == "log-reader" {
		return verb == "get" && sub == "log", nil
	}
	return c.Name == "system:serviceaccount:kube-system:metrics-server" && verb == "get" && (sub == "metrics" || sub == "stats"), nil
}

type fakeStats struct{}

func (fakeStats) NodeName() string { return "n1" }
func (fakeStats) Node() (Usage, time.Time, error) {
	return Usage{CPUNanos: 5e9, MemoryWorkingSet: 1 << 20}, time.Unix(1, 0), nil
}
func (fakeStats) Pods(context.Context) ([]PodStats, error) {
	return []PodStats{{Namespace: "ns", Name: "p", UID: "u", Usage: Usage{CPUNanos: 2e9, MemoryWorkingSet: 4096},
		Containers: []ContainerStats{{Name: "c", Start: time.Unix(100, 0), Usage: Usage{CPUNanos: 1500000000, MemoryWorkingSet: 2048}}}}}, nil
}

func TestMetricsEndpoints(t *testing.T) {
	b := nodePKI(t)
	logDir := t.TempDir()
	if err := os.WriteFile(filepath.Join(logDir, "syslog"), []byte("booted\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	srv, err := New(zaptest.NewLogger(t), Config{Runtime: runtime.NewFake(), ServerTLS: b.ServerTLSConfig(), ClientCA: b.CAPool(), NodeLogDir: logDir,
		PodLookup: func(string, string) (Pod, bool) { return Pod{}, false }, Tokens: fakeReviews{}, Access: fakeReviews{}, Stats: fakeStats{},
		Pods: func() []*corev1.Pod {
			return []*corev1.Pod{{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p"}, Status: corev1.PodStatus{Phase: corev1.PodRunning,
				ContainerStatuses: []corev1.ContainerStatus{{Name: "c", State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}}}}}
		}})
	if err != nil {
		t.Fatal(err)
	}
	get := serveBearer(t, srv, b.CAPool())
	if code, _ := get("/metrics/resource", ""); code != http.StatusUnauthorized {
		t.Fatalf("no credentials: %d", code)
	}
	if code, _ := get("/metrics/resource", "forged"); code != http.StatusUnauthorized {
		t.Fatalf("a token the API rejects: %d", code)
	}
	if code, _ := get("/metrics/resource", "nobody"); code != http.StatusForbidden {
		t.Fatalf("a user without nodes/metrics: %d", code)
	}
	code, body := get("/metrics/resource", "metrics")
	for _, want := range []string{`container_cpu_usage_seconds_total{container="c",namespace="ns",pod="p"} 1.5 `,
		`container_memory_working_set_bytes{container="c",namespace="ns",pod="p"} 2048 `, "node_cpu_usage_seconds_total 5 ",
		"node_memory_working_set_bytes 1048576 ", "# TYPE container_cpu_usage_seconds_total counter", "resource_scrape_error 0"} {
		if code != http.StatusOK || !strings.Contains(body, want) {
			t.Fatalf("/metrics/resource (%d) lacks %q:\n%s", code, want, body)
		}
	}
	code, body = get("/stats/summary", "metrics")
	var s summary
	if err := json.Unmarshal([]byte(body), &s); code != http.StatusOK || err != nil {
		t.Fatalf("/stats/summary %d %v: %s", code, err, body)
	}
	if s.Node.NodeName != "n1" || len(s.Pods) != 1 || s.Pods[0].Containers[0].Memory.WorkingSetBytes != 2048 {
		t.Fatalf("summary %+v", s)
	}
	if code, _ := get("/containerLogs/ns/p/c", "metrics"); code != http.StatusForbidden {
		t.Fatalf("metrics token on the logs endpoint: %d", code)
	}
	code, body = get("/pods", "proxy")
	var pods corev1.PodList
	if err := json.Unmarshal([]byte(body), &pods); code != http.StatusOK || err != nil || pods.Kind != "PodList" ||
		len(pods.Items) != 1 || pods.Items[0].Name != "p" {
		t.Fatalf("/pods %d %v: %s", code, err, body)
	}
	if code, _ := get("/pods", "metrics"); code != http.StatusForbidden {
		t.Fatalf("/pods needs nodes/proxy: %d", code)
	}
	// /metrics (kubelet's own; the e2e framework's metrics grabber reads it)
	code, body = get("/metrics", "metrics")
	for _, want := range []string{"kubelet_running_pods 1\n", `kubelet_running_containers{container_state="running"} 1`} {
		if code != http.StatusOK || !strings.Contains(body, want) {
			t.Fatalf("/metrics (%d) lacks %q:\n%s", code, want, body)
		}
	}
	if code, body := get("/healthz", "proxy"); code != http.StatusOK || body != "ok" {
		t.Fatalf("/healthz %d %s", code, body)
	}
	// /logs/: the node's log dir, for nodes/log
	if code, body := get("/logs/", "logs"); code != http.StatusOK || !strings.Contains(body, `href="syslog"`) {
		t.Fatalf("/logs/ %d %s", code, body)
	}
	if code, body := get("/logs/syslog", "logs"); code != http.StatusOK || body != "booted\n" {
		t.Fatalf("/logs/syslog %d %q", code, body)
	}
	if code, _ := get("/logs/syslog", "proxy"); code != http.StatusForbidden {
		t.Fatalf("/logs/ needs nodes/log: %d", code)
	}
}
