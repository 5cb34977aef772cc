package garbagecollector

import (
	"context"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"

	"github.com/orch/orch/internal/handlermux"
	"github.com/orch/orch/server/controllers/kit"
	"github.com/orch/orch/server/controllers/kit/kittest"
)

// cacheUser stands for a controller that caches ConfigMaps.
type cacheUser struct{}

func (cacheUser) Run(ctx context.Context) error { <-ctx.Done(); return nil }

// TestCachedResourcesJoinBeforeStart: with metadata informers available
// (as in the server), the collector adds its handler to the informers the
// other controllers cache before the cache starts, so it shares their
// listener, and collects through it.
func TestCachedResourcesJoinBeforeStart(t *testing.T) {
	var rc *rest.Config
	var kc *kit.Context
	client, c := kittest.Run(t, New,
		kittest.Rest(func(r *rest.Config) { rc = rest.CopyConfig(r) }),
		kittest.Also(func(k *kit.Context) (cacheUser, error) {
			kc = k
			k.Informers.Core().V1().ConfigMaps().Informer()
			return cacheUser{}, nil
		}),
		kittest.Before(func(c *Controller) { c.kc.Metadata = metadata.NewForConfigOrDie(rc) }))
	if len(c.preSynced) == 0 {
		t.Fatal("no handler was added before the cache started")
	}
	if n := kc.Informers.(*handlermux.Factory).Handlers(); n == 0 {
		t.Fatal("the collector's handlers do not share the cached informers' listeners")
	}
	owner := cm(t, client, "owner")
	cm(t, client, "dependent", owner)
	del(t, client, "owner", metav1.DeletePropagationBackground)
	kittest.Eventually(t, 30*time.Second, "the dependent to be collected", func() (bool, string) {
		_, exists := getCM(client, "dependent")
		return !exists, "still there"
	})
	if _, err := client.CoreV1().ConfigMaps("default").Get(context.Background(), "owner", metav1.GetOptions{}); err == nil {
		t.Error("owner still there")
	}
}
