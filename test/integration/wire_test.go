package integration

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/orch/orch/test/testutil"
)

func init() {
	register("UnmodifiedClientGoDefaults", testClientGoDefaults)
}

// testClientGoDefaults uses a clientset built straight from the kubeconfig
// with no content-type override, as any client-go program does. client-go
// v0.37 then sends built-in types as protobuf and accepts
// "application/vnd.kubernetes.protobuf,application/json".
func testClientGoDefaults(t *testing.T, s *testutil.Server) {
	ctx := ctxT(t)
	cfg, err := clientcmd.BuildConfigFromFlags("", s.Kubeconfig)
	must(t, err, "load kubeconfig")
	cs, err := kubernetes.NewForConfig(cfg)
	must(t, err, "clientset")
	ns := newNamespace(t, s.Clientset)
	_, err = cs.CoreV1().ConfigMaps(ns).Create(ctx, cm(ns, "plain", map[string]string{"a": "b"}), metav1.CreateOptions{})
	must(t, err, "create with an unmodified client-go clientset")
	got, err := cs.CoreV1().ConfigMaps(ns).Get(ctx, "plain", metav1.GetOptions{})
	must(t, err, "get with an unmodified client-go clientset")
	if got.Data["a"] != "b" {
		t.Fatalf("data %v", got.Data)
	}
}
