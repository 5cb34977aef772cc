package kubeletprobes_test

import (
	"context"
	"testing"
	"time"

	"github.com/orch/orch/agent/kubelet"
	"github.com/orch/orch/agent/prober"
	"github.com/orch/orch/agent/prober/kubeletprobes"
	"github.com/orch/orch/agent/runtime"
	"go.uber.org/zap/zaptest"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

var _ kubelet.Probes = (*kubeletprobes.Probes)(nil)

func TestAdapter(t *testing.T) {
	fail := func(context.Context, string, []string) (int, []byte, error) { return 1, nil, nil }
	m := prober.New(zaptest.NewLogger(t), prober.Deps{Exec: fail})
	t.Cleanup(m.Stop)
	p := kubeletprobes.New(m)
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "d", UID: "u"},
		Spec: corev1.PodSpec{Containers: []corev1.Container{
			{Name: "plain"},
			{Name: "sick", LivenessProbe: &corev1.Probe{FailureThreshold: 1,
				ProbeHandler: corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"false"}}}}},
		}}}
	p.SyncPod(pod, "10.42.0.5", map[string]runtime.ContainerStatus{
		"plain": {ID: "id1", StartedAt: time.Now()}, "sick": {ID: "id2", StartedAt: time.Now()}})
	if !p.Ready("u", "plain", "id1") || !p.Started("u", "plain", "id1") || p.Ready("u", "plain", "old") {
		t.Fatal("plain container state wrong")
	}
	select {
	case u := <-p.Updates():
		if u.Container != "sick" || u.Probe != prober.Liveness || u.Result != prober.Failure {
			t.Fatalf("update %+v", u)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no liveness update")
	}
	if k, failed := p.LivenessFailed("u", "sick", "id2"); !failed || k != prober.Liveness {
		t.Fatal("liveness failure not reported")
	}
	if _, failed := p.LivenessFailed("u", "sick", "other"); failed {
		t.Fatal("failure reported for another container ID")
	}
	p.RemovePod("u")
	if p.Started("u", "plain", "id1") {
		t.Fatal("removed pod still started")
	}
}
