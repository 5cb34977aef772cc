package apiserver

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"

	"go.uber.org/zap/zaptest"

	"github.com/orch/orch/datastore"
	"github.com/orch/orch/server/auth"
	"github.com/orch/orch/server/registry"
	"github.com/orch/orch/server/registry/all"
)

// metaAllowAll authenticates every request as an admin and allows everything.
type metaAllowAll struct{}

func (metaAllowAll) AuthenticateRequest(*http.Request) (*auth.User, bool, error) {
	return &auth.User{Name: "admin", Groups: []string{"system:masters"}}, true, nil
}

func (metaAllowAll) Authorize(context.Context, auth.Attributes) (bool, string, error) {
	return true, "", nil
}

// newMetaTestServer builds a Server over a MemStore with every registry
// resource, advertising 10.0.0.5:6443 and service CIDR 10.43.0.0/16.
func newMetaTestServer(t *testing.T, mutate func(*Config)) (*Server, datastore.Store) {
	t.Helper()
	store := datastore.NewMemStore(0)
	t.Cleanup(func() { _ = store.Close() })
	_, cidr, _ := net.ParseCIDR("10.43.0.0/16")
	cfg := Config{
		Store: store, Resources: all.Resources(registry.Config{ServiceCIDR: cidr}),
		Authenticator: metaAllowAll{}, Authorizer: metaAllowAll{}, Logger: zaptest.NewLogger(t),
		AdvertiseAddress: net.ParseIP("10.0.0.5"), SecurePort: 6443, ServiceCIDR: cidr,
	}
	if mutate != nil {
		mutate(&cfg)
	}
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return s, store
}

// metaGet sends a GET through the whole handler.
func metaGet(t *testing.T, s *Server, path, accept string) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequest(http.MethodGet, path, nil)
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	rec := httptest.NewRecorder()
	s.Handler().ServeHTTP(rec, req)
	return rec
}
