package integration

import (
	"strconv"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/orch/orch/test/testutil"
)

// TestConfigFromEnvironment starts `orch server` with every setting given as
// an ORCH_<FLAG> environment variable and no flags.
func TestConfigFromEnvironment(t *testing.T) {
	t.Parallel()
	s := testutil.StartServer(t, testutil.Options{Quiet: true, ViaEnv: true})
	ctx := ctxT(t)
	if _, err := s.Clientset.CoreV1().Namespaces().Get(ctx, "default", metav1.GetOptions{}); err != nil {
		t.Fatalf("server configured from the environment does not serve: %v", err)
	}
	if s.Config.Host != "https://127.0.0.1:"+itoa(s.HTTPSPort) {
		t.Errorf("kubeconfig server %s, want https://127.0.0.1:%d (ORCH_HTTPS_LISTEN_PORT ignored?)", s.Config.Host, s.HTTPSPort)
	}
	testKubeconfigMode(t, s)
}

func itoa(n int) string { return strconv.Itoa(n) }
