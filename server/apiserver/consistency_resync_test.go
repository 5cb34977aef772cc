package apiserver_test

import (
	"context"
	"errors"
	"net/http"
	"testing"

	"go.uber.org/zap/zaptest"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/orch/orch/datastore"
	"github.com/orch/orch/server/apiserver"
	"github.com/orch/orch/server/auth"
	"github.com/orch/orch/server/registry"
	"github.com/orch/orch/server/registry/all"
)

// unsyncedStore is a server that cannot reach the leader: its quorum-read
// barrier fails, its local reads still answer.
type unsyncedStore struct{ *datastore.MemStore }

func (unsyncedStore) Sync(context.Context) error { return errors.New("no leader") }

type allowEverything struct{}

func (allowEverything) AuthenticateRequest(*http.Request) (*auth.User, bool, error) {
	return &auth.User{Name: "test", Groups: []string{auth.GroupMasters}}, true, nil
}

func (allowEverything) Authorize(context.Context, auth.Attributes) (bool, string, error) {
	return true, "", nil
}

// TestResyncFailureIsNoStale404 checks that an update or delete whose local
// read says 404 or 409 answers a timeout, not the unconfirmed 404/409, when
// the server cannot sync with the leader (test/reliability found a 404 for
// an object acknowledged before the request, during a leader kill).
func TestResyncFailureIsNoStale404(t *testing.T) {
	store := unsyncedStore{datastore.NewMemStore(1000)}
	t.Cleanup(func() { _ = store.Close() })
	api, err := apiserver.New(apiserver.Config{Store: store, Resources: all.Resources(registry.Config{}),
		Authenticator: allowEverything{}, Authorizer: allowEverything{}, Logger: zaptest.NewLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	cs := kubernetes.NewForConfigOrDie(&rest.Config{Host: "http://orch-loopback", Transport: api.LoopbackTransport()})
	ctx := context.Background()
	rc := cs.CoreV1().RESTClient() // once: client-go would retry the 504 after its Retry-After
	err = rc.Delete().Namespace("default").Resource("configmaps").Name("missing").MaxRetries(0).Do(ctx).Error()
	if !apierrors.IsTimeout(err) {
		t.Errorf("delete of a key this server does not have, unsynced: %v, want a timeout", err)
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "missing", ResourceVersion: "5"}}
	err = rc.Put().Namespace("default").Resource("configmaps").Name("missing").Body(cm).MaxRetries(0).Do(ctx).Error()
	if !apierrors.IsTimeout(err) {
		t.Errorf("update of a key this server does not have, unsynced: %v, want a timeout", err)
	}
}
