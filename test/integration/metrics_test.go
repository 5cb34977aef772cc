package integration

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	metricsv1beta1 "k8s.io/metrics/pkg/apis/metrics/v1beta1"

	"github.com/orch/orch/test/testutil"
)

const metricsNodes = "/apis/metrics.k8s.io/v1beta1/nodes"

// TestMetricsAPI: orch server serves metrics.k8s.io itself (discovery, a
// Local APIService, RBAC through system:aggregated-metrics-reader and the
// view role), and `--disable metrics-server` hands the group over: no
// group, no Local APIService, a real metrics-server's APIService proxied.
// With no agent there are no nodes, so the lists are empty (the kubectl
// top end-to-end test is test/e2e TestKubectlTop).
func TestMetricsAPI(t *testing.T) {
	s := testutil.StartServer(t, testutil.Options{Quiet: true})
	ctx := context.Background()
	raw := func(cs kubernetes.Interface, path string) ([]byte, error) {
		return cs.CoreV1().RESTClient().Get().AbsPath(path).DoRaw(ctx)
	}
	waitFor(t, "Local APIService v1beta1.metrics.k8s.io", func() error {
		b, err := raw(s.Clientset, "/apis/apiregistration.k8s.io/v1/apiservices/v1beta1.metrics.k8s.io")
		if err == nil && !strings.Contains(string(b), `"reason":"Local"`) {
			return errString("not Local: " + string(b))
		}
		return err
	})
	b, err := raw(s.Clientset, metricsNodes)
	var list metricsv1beta1.NodeMetricsList
	if err != nil || json.Unmarshal(b, &list) != nil || list.Kind != "NodeMetricsList" || len(list.Items) != 0 {
		t.Fatalf("node metrics = %v %s", err, b)
	}
	groups, err := s.Clientset.Discovery().ServerGroups()
	must(t, err, "discovery")
	found := false
	for _, g := range groups.Groups {
		found = found || g.Name == "metrics.k8s.io" && g.PreferredVersion.Version == "v1beta1"
	}
	if !found {
		t.Fatalf("metrics.k8s.io not in discovery: %+v", groups.Groups)
	}
	metricsRBAC(t, s)

	// Restart with metrics-server disabled (config file: keys are flag names).
	cfgFile := filepath.Join(filepath.Dir(s.DataDir), "config.yaml")
	must(t, os.WriteFile(cfgFile, []byte("disable:\n- metrics-server\n"), 0o600), "write config")
	s.Restart()
	if _, err := raw(s.Clientset, metricsNodes); !apierrors.IsNotFound(err) {
		t.Fatalf("node metrics with --disable metrics-server: %v, want 404", err)
	}
	waitFor(t, "the Local APIService removed", func() error {
		_, err := raw(s.Clientset, "/apis/apiregistration.k8s.io/v1/apiservices/v1beta1.metrics.k8s.io")
		if apierrors.IsNotFound(err) {
			return nil
		}
		return errString("still there")
	})
	// metrics-server's own APIService now takes the group (its Service does
	// not exist here: the proxy answers 503).
	apiService := `{"apiVersion":"apiregistration.k8s.io/v1","kind":"APIService","metadata":{"name":"v1beta1.metrics.k8s.io"},
"spec":{"service":{"name":"metrics-server","namespace":"kube-system"},"group":"metrics.k8s.io","version":"v1beta1",
"insecureSkipTLSVerify":true,"groupPriorityMinimum":100,"versionPriority":100}}`
	err = s.Clientset.CoreV1().RESTClient().Post().AbsPath("/apis/apiregistration.k8s.io/v1/apiservices").
		Body([]byte(apiService)).SetHeader("Content-Type", "application/json").Do(ctx).Error()
	must(t, err, "create metrics-server's APIService")
	if _, err := raw(s.Clientset, metricsNodes); !apierrors.IsServiceUnavailable(err) {
		t.Fatalf("node metrics through a missing metrics-server: %v, want 503", err)
	}
}

// metricsRBAC: a user without a binding gets 403; bound to view in a
// namespace (which aggregates system:aggregated-metrics-reader) it may list
// that namespace's pod metrics.
func metricsRBAC(t *testing.T, s *testutil.Server) {
	ctx := context.Background()
	cfg := rest.CopyConfig(s.Config)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: "metrics-nobody", Groups: []string{"system:authenticated"}}
	cs, err := kubernetes.NewForConfig(cfg)
	must(t, err, "clientset")
	path := "/apis/metrics.k8s.io/v1beta1/namespaces/default/pods"
	_, err = cs.CoreV1().RESTClient().Get().AbsPath(path).DoRaw(ctx)
	if !apierrors.IsForbidden(err) {
		t.Fatalf("pod metrics without a binding: %v, want 403", err)
	}
	rb := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "metrics-nobody-view"},
		RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: "view"},
		Subjects: []rbacv1.Subject{{Kind: "User", Name: "metrics-nobody", APIGroup: "rbac.authorization.k8s.io"}}}
	_, err = s.Clientset.RbacV1().RoleBindings("default").Create(ctx, rb, metav1.CreateOptions{})
	must(t, err, "bind view")
	deadline := time.Now().Add(30 * time.Second)
	for {
		_, err = cs.CoreV1().RESTClient().Get().AbsPath(path).DoRaw(ctx)
		if err == nil || time.Now().After(deadline) {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	must(t, err, "pod metrics as a viewer")
	if _, err := cs.CoreV1().RESTClient().Get().AbsPath(metricsNodes).DoRaw(ctx); !apierrors.IsForbidden(err) {
		t.Errorf("node metrics as a namespace viewer: %v, want 403", err)
	}
}
