package integration

import (
	"context"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/orch/orch/test/testutil"
)

// TestAggregationBootstrap: a real orch server keeps the
// extension-apiserver-authentication ConfigMap and Local APIServices.
func TestAggregationBootstrap(t *testing.T) {
	s := testutil.StartServer(t, testutil.Options{Quiet: true, ExtraArgs: []string{"--disable-controller-manager"}})
	ctx := context.Background()
	var err error
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		c, e := s.Clientset.CoreV1().ConfigMaps("kube-system").Get(ctx, "extension-apiserver-authentication", metav1.GetOptions{})
		if err = e; err == nil {
			if !strings.Contains(c.Data["requestheader-client-ca-file"], "BEGIN CERTIFICATE") ||
				c.Data["requestheader-allowed-names"] != `["front-proxy-client"]` {
				t.Fatalf("ConfigMap data = %v", c.Data)
			}
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	if err != nil {
		t.Fatalf("ConfigMap: %v\n%s", err, s.Output())
	}
	raw, err := s.Clientset.CoreV1().RESTClient().Get().AbsPath("/apis/apiregistration.k8s.io/v1/apiservices/v1.apps").DoRaw(ctx)
	if err != nil || !strings.Contains(string(raw), `"reason":"Local"`) {
		t.Fatalf("v1.apps APIService: %v %s", err, raw)
	}
}
