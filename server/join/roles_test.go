package join

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/orch/orch/internal/bootstraptoken"
	"github.com/orch/orch/internal/pki"
)

// failingGetter is a SecretGetter whose datastore is down.
type failingGetter struct{}

func (failingGetter) Get(context.Context, string, metav1.GetOptions) (*corev1.Secret, error) {
	return nil, errors.New("datastore unavailable")
}

// TestTokenRoles: the server token opens both endpoints; the agent token
// and bootstrap tokens join agents only; expired and deleted bootstrap
// tokens are refused with a Status saying so.
func TestTokenRoles(t *testing.T) {
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	good := bootstraptoken.Token{ID: "abcdef", Secret: "0123456789abcdef"}
	old := bootstraptoken.Token{ID: "oldold", Secret: "0123456789abcdef"}
	goodSecret, _ := bootstraptoken.NewSecret(good, bootstraptoken.Spec{TTL: time.Hour}, now)
	oldSecret, _ := bootstraptoken.NewSecret(old, bootstraptoken.Spec{TTL: time.Hour}, now.Add(-2*time.Hour))
	secrets := fake.NewClientset(goodSecret, oldSecret).CoreV1().Secrets(bootstraptoken.Namespace)
	b, err := pki.LoadOrCreate(filepath.Join(t.TempDir(), "tls"), pki.Options{Hostname: "h",
		HostIPs: func() ([]net.IP, error) { return []net.IP{net.ParseIP("127.0.0.1")}, nil }})
	if err != nil {
		t.Fatal(err)
	}
	h, err := New(Config{CA: b, Token: testSecret, AgentToken: "agent-only-secret", BootstrapTokens: secrets,
		Now: func() time.Time { return now }, Logger: zaptest.NewLogger(t),
		ServerBootstrap: func() (*ServerBootstrap, error) {
			return &ServerBootstrap{Files: map[string][]byte{"tls/ca.key": []byte("k")}}, nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	body, _ := json.Marshal(NodeCertificateRequest{NodeName: "node-1", CSRPEM: testCSR(t)})
	tests := []struct {
		name, bearer     string
		node, bootstrap  int
		nodeMsg, bootMsg string
	}{
		{"server token", testSecret, 200, 200, "", ""},
		{"agent token", "agent-only-secret", 200, 403, "", "may only join agents"},
		{"full agent token", pki.FormatAgentToken(pki.CAHash(b.CAPEM()), "agent-only-secret"), 200, 403, "", "may only join agents"},
		{"bootstrap token", good.String(), 200, 403, "", "may only join agents"},
		{"full bootstrap token", pki.FormatBootstrapToken(pki.CAHash(b.CAPEM()), good.String()), 200, 403, "", "may only join agents"},
		{"expired bootstrap token", old.String(), 401, 401, "expired", "expired"},
		{"unknown bootstrap token", "zzzzzz.0123456789abcdef", 401, 401, "does not exist", "does not exist"},
		{"wrong bootstrap secret", "abcdef.0123456789abcdee", 401, 401, "secret is wrong", "secret is wrong"},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			remote := net.JoinHostPort(net.IPv4(192, 0, 2, byte(10+i)).String(), "1")
			w := post(h, "Bearer "+tt.bearer, string(body), remote)
			checkStatus(t, w, tt.node, tt.nodeMsg)
			r := httptest.NewRequest(http.MethodPost, ServerBootstrapPath, http.NoBody)
			r.Header.Set("Authorization", "Bearer "+tt.bearer)
			r.RemoteAddr = remote
			w = httptest.NewRecorder()
			h.ServeHTTP(w, r)
			checkStatus(t, w, tt.bootstrap, tt.bootMsg)
		})
	}
}

// TestTokenLookupFailure: a datastore error is a 503, not a failed attempt.
func TestTokenLookupFailure(t *testing.T) {
	b, err := pki.LoadOrCreate(filepath.Join(t.TempDir(), "tls"), pki.Options{Hostname: "h",
		HostIPs: func() ([]net.IP, error) { return []net.IP{net.ParseIP("127.0.0.1")}, nil }})
	if err != nil {
		t.Fatal(err)
	}
	h, err := New(Config{CA: b, Token: testSecret, BootstrapTokens: failingGetter{}, Limits: Limits{PerIPBurst: 1}})
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		checkStatus(t, post(h, "Bearer abcdef.0123456789abcdef", "{}", "192.0.2.1:1"), 503, "looking up")
	}
}

func checkStatus(t *testing.T, w *httptest.ResponseRecorder, code int, msg string) {
	t.Helper()
	if w.Code != code {
		t.Fatalf("code %d, want %d: %s", w.Code, code, w.Body)
	}
	if code == 200 {
		return
	}
	var st metav1.Status
	if err := json.Unmarshal(w.Body.Bytes(), &st); err != nil || st.Kind != "Status" || int(st.Code) != code {
		t.Fatalf("body is not a Status with code %d: %s", code, w.Body)
	}
	if !strings.Contains(st.Message, msg) {
		t.Errorf("message %q does not mention %q", st.Message, msg)
	}
}
