package integration

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/orch/orch/test/testutil"
)

func init() {
	register("InformerSyncsAndFollows", func(t *testing.T, s *testutil.Server) { testInformer(t, s, s.Clientset) })
	register("InformerDefaultContentType", func(t *testing.T, s *testutil.Server) {
		// client-go's defaults: protobuf requests and protobuf watch frames.
		cfg, err := clientcmd.BuildConfigFromFlags("", s.Kubeconfig)
		must(t, err, "load kubeconfig")
		cfg.QPS = -1 // only client-side throttling off; content type untouched
		cs, err := kubernetes.NewForConfig(cfg)
		must(t, err, "clientset")
		testInformer(t, s, cs)
	})
}

// testInformer runs a client-go shared informer (reflector list+watch, as
// controllers and the agent use it) and checks its cache follows creates,
// updates and deletes.
func testInformer(t *testing.T, s *testutil.Server, cs kubernetes.Interface) {
	ctx := ctxT(t)
	ns := newNamespace(t, cs)
	c := cs.CoreV1().ConfigMaps(ns)
	for i := range 30 {
		_, err := c.Create(ctx, cm(ns, fmt.Sprintf("pre-%d", i), nil), metav1.CreateOptions{})
		must(t, err, "create")
	}
	f := informers.NewSharedInformerFactoryWithOptions(cs, 0, informers.WithNamespace(ns))
	inf := f.Core().V1().ConfigMaps().Informer()
	stop := make(chan struct{})
	defer func() {
		close(stop)
		f.Shutdown()
	}()
	f.Start(stop)
	syncCtx, cancel := contextWithTimeout(ctx, 2*time.Minute)
	defer cancel()
	if !cache.WaitForCacheSync(syncCtx.Done(), inf.HasSynced) {
		t.Fatalf("informer did not sync")
	}
	if n := len(inf.GetStore().List()); n != 30 {
		t.Fatalf("informer cache has %d configmaps after sync, want 30", n)
	}
	for i := range 20 {
		_, err := c.Create(ctx, cm(ns, fmt.Sprintf("post-%d", i), map[string]string{"v": "1"}), metav1.CreateOptions{})
		must(t, err, "create")
	}
	for i := range 10 {
		must(t, c.Delete(ctx, fmt.Sprintf("pre-%d", i), metav1.DeleteOptions{}), "delete")
	}
	_, err := c.Update(ctx, cm(ns, "post-0", map[string]string{"v": "2"}), metav1.UpdateOptions{})
	must(t, err, "update")
	err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 2*time.Minute, true, func(context.Context) (bool, error) {
		if len(inf.GetStore().List()) != 40 {
			return false, nil
		}
		o, ok, _ := inf.GetStore().GetByKey(ns + "/post-0")
		return ok && o.(*corev1.ConfigMap).Data["v"] == "2", nil
	})
	if err != nil {
		t.Fatalf("informer cache has %d configmaps, want 40 with post-0 v=2: %v", len(inf.GetStore().List()), err)
	}
}

func contextWithTimeout(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, d)
}
