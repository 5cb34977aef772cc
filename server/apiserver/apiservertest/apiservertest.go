// Package apiservertest starts orch's real API server in-process for the
// tests of in-process clients (controllers): a memory datastore, every
// registry resource, and authentication and authorization that let every
// request through. Clients reach it through its loopback transport.
package apiservertest

import (
	"context"
	"net/http"
	"testing"

	"go.uber.org/zap/zaptest"
	"k8s.io/client-go/rest"

	"github.com/orch/orch/datastore"
	"github.com/orch/orch/server/apiserver"
	"github.com/orch/orch/server/auth"
	"github.com/orch/orch/server/registry"
	"github.com/orch/orch/server/registry/all"
)

// allowAll authenticates every request as a system:masters user and
// authorizes everything.
type allowAll struct{}

func (allowAll) AuthenticateRequest(*http.Request) (*auth.User, bool, error) {
	return &auth.User{Name: "test", Groups: []string{auth.GroupMasters}}, true, nil
}

func (allowAll) Authorize(context.Context, auth.Attributes) (bool, string, error) {
	return true, "", nil
}

// Start returns the API server and a rest.Config that reaches it in-process.
// The datastore is closed when the test ends.
func Start(t testing.TB) (*apiserver.Server, *rest.Config) {
	t.Helper()
	store := datastore.NewMemStore(1000)
	t.Cleanup(func() { _ = store.Close() })
	api, err := apiserver.New(apiserver.Config{Store: store, Resources: all.Resources(registry.Config{}),
		Authenticator: allowAll{}, Authorizer: allowAll{}, Logger: zaptest.NewLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	return api, &rest.Config{Host: "http://orch-loopback", Transport: api.LoopbackTransport()}
}
