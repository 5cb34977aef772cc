package integration

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/orch/orch/internal/metrics/metricstest"
	"github.com/orch/orch/test/testutil"
)

// TestPrometheusMetrics: a real server's /metrics has the request metrics
// of a list just made, the datastore's, the controllers' workqueues and
// the scheduler's; a ServiceAccount without RBAC for /metrics gets 403.
func TestPrometheusMetrics(t *testing.T) {
	s := testutil.StartServer(t, testutil.Options{Quiet: true})
	ctx, cs := ctxT(t), s.Clientset
	ns := newNamespace(t, cs)
	_, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, cm(ns, "c1", nil), metav1.CreateOptions{})
	must(t, err, "create configmap")
	_, err = cs.CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{})
	must(t, err, "list configmaps")
	waitFor(t, "the default ServiceAccount", func() error {
		_, err := cs.CoreV1().ServiceAccounts(ns).Get(ctx, "default", metav1.GetOptions{})
		return err
	})
	// No nodes: the scheduler tries it and finds it unschedulable.
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "pending"},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}}
	_, err = cs.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{})
	must(t, err, "create pod")

	type want struct {
		name   string
		labels map[string]string
	}
	wants := []want{
		{"apiserver_request_total", map[string]string{"verb": "LIST", "group": "", "version": "v1", "resource": "configmaps",
			"scope": "namespace", "component": "apiserver", "code": "200"}},
		{"apiserver_request_total", map[string]string{"verb": "POST", "resource": "pods", "code": "201"}},
		{"apiserver_request_duration_seconds", map[string]string{"verb": "LIST", "resource": "configmaps"}},
		{"workqueue_adds_total", map[string]string{"name": "deployment"}},
		{"workqueue_depth", map[string]string{"name": "scheduler"}},
		{"workqueue_work_duration_seconds", map[string]string{"name": "scheduler"}},
		{"scheduler_schedule_attempts_total", map[string]string{"result": "unschedulable", "profile": "default-scheduler"}},
		{"scheduler_pending_pods", map[string]string{"queue": "unschedulable"}},
		{"apiserver_flowcontrol_nominal_limit_seats", map[string]string{"priority_level": "workload-low"}},
		{"process_resident_memory_bytes", nil},
	}
	if os.Getenv(testutil.EnvEtcd) != "1" { // the embedded Raft store only
		wants = append(wants, want{"orch_datastore_is_leader", nil}, want{"orch_datastore_raft_apply_duration_seconds", nil},
			want{"orch_datastore_wal_fsync_duration_seconds", nil}, want{"orch_datastore_db_total_size_in_bytes", nil},
			want{"orch_datastore_leader_changes_seen_total", nil})
	}
	waitFor(t, "the metrics", func() error {
		body, err := cs.CoreV1().RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
		if err != nil {
			return err
		}
		fams, err := metricstest.Parse(bytes.NewReader(body))
		if err != nil {
			t.Fatalf("/metrics does not parse: %v", err)
		}
		for _, w := range wants {
			if _, ok := fams.Find(w.name, w.labels); !ok {
				return fmt.Errorf("%s%v missing (have %s)", w.name, w.labels, fams.Names())
			}
		}
		if s, _ := fams.Find("orch_datastore_is_leader", nil); os.Getenv(testutil.EnvEtcd) != "1" && s.Value != 1 {
			t.Fatalf("orch_datastore_is_leader = %v on the only server", s.Value)
		}
		return nil
	})
	testMetricsForbidden(ctx, t, s, ns)
}

// testMetricsForbidden: /metrics is RBAC's non-resource URL; a fresh
// ServiceAccount has no grant for it.
func testMetricsForbidden(ctx context.Context, t *testing.T, s *testutil.Server, ns string) {
	_, err := s.Clientset.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "scraper"}},
		metav1.CreateOptions{})
	must(t, err, "create ServiceAccount")
	tr, err := s.Clientset.CoreV1().ServiceAccounts(ns).CreateToken(ctx, "scraper", &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
	must(t, err, "token")
	_, err = saClient(t, s, tr.Status.Token).CoreV1().RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
	if !apierrors.IsForbidden(err) {
		t.Fatalf("GET /metrics as a ServiceAccount without RBAC: %v, want 403", err)
	}
}
