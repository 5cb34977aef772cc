package tokencleaner

import (
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/orch/orch/internal/bootstraptoken"
	"github.com/orch/orch/server/controllers/kit"
	"github.com/orch/orch/server/controllers/kit/kittest"
)

// TestController: an expired token and one with a garbled expiration go;
// a live one, one that never expires and an expired-looking Opaque Secret
// stay; a token created to expire a moment later goes when it does.
func TestController(t *testing.T) {
	cs, _ := kittest.Run(t, func(kc *kit.Context) (*Controller, error) { return New(kc) })
	secrets := cs.CoreV1().Secrets(bootstraptoken.Namespace)
	now := time.Now()
	mk := func(id string, ttl time.Duration, created time.Time) *corev1.Secret {
		s, err := bootstraptoken.NewSecret(bootstraptoken.Token{ID: id, Secret: "0123456789abcdef"}, bootstraptoken.Spec{TTL: ttl}, created)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	garbled := mk("garble", time.Hour, now)
	garbled.Data[bootstraptoken.ExpirationKey] = []byte("soon")
	opaque := mk("opaque", time.Hour, now.Add(-2*time.Hour))
	opaque.Type = corev1.SecretTypeOpaque
	for _, s := range []*corev1.Secret{mk("expird", time.Hour, now.Add(-2*time.Hour)), mk("living", time.Hour, now),
		mk("foreva", 0, now), garbled, opaque, mk("breath", 2*time.Second, now)} {
		if _, err := secrets.Create(t.Context(), s, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	kittest.Eventually(t, 20*time.Second, "the expired tokens to go", func() (bool, string) {
		l, err := secrets.List(t.Context(), metav1.ListOptions{})
		if err != nil {
			return false, err.Error()
		}
		var left []string
		for _, s := range l.Items {
			left = append(left, strings.TrimPrefix(s.Name, bootstraptoken.SecretPrefix))
		}
		slices.Sort(left)
		return strings.Join(left, ",") == "foreva,living,opaque", strings.Join(left, ",")
	})
}
