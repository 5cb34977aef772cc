package kubelet

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// maxTokenAge is kubelet's: a token is renewed after 24 h even when its
// lifetime is longer.
const maxTokenAge = 24 * time.Hour

// tokenManager mints the tokens of projected serviceAccountToken volumes
// through the TokenRequest API, bound to the pod, and hands out the cached
// token until kubelet's refresh point (80 % of its lifetime, or 24 h); the
// periodic volume resync writes the renewed token into the pod.
type tokenManager struct {
	client kubernetes.Interface
	now    func() time.Time

	mu     sync.Mutex
	tokens map[string]cachedToken
}

type cachedToken struct {
	token   string
	issued  time.Time
	expires time.Time
}

func newTokenManager(client kubernetes.Interface) *tokenManager {
	return &tokenManager{client: client, now: time.Now, tokens: map[string]cachedToken{}}
}

// ServiceAccountToken implements volumes.TokenSource.
func (m *tokenManager) ServiceAccountToken(ctx context.Context, pod *corev1.Pod, p *corev1.ServiceAccountTokenProjection) ([]byte, error) {
	sa := pod.Spec.ServiceAccountName
	if sa == "" {
		sa = "default"
	}
	exp := int64(3600)
	if p.ExpirationSeconds != nil {
		exp = *p.ExpirationSeconds
	}
	key := strings.Join([]string{pod.Namespace, sa, string(pod.UID), p.Audience, fmt.Sprint(exp)}, "/")
	now := m.now()
	m.mu.Lock()
	c, ok := m.tokens[key]
	m.mu.Unlock()
	if ok && !needsRefresh(c, now) {
		return []byte(c.token), nil
	}
	req := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{
		ExpirationSeconds: &exp,
		BoundObjectRef:    &authenticationv1.BoundObjectReference{Kind: "Pod", APIVersion: "v1", Name: pod.Name, UID: pod.UID},
	}}
	if p.Audience != "" {
		req.Spec.Audiences = []string{p.Audience}
	}
	tr, err := m.client.CoreV1().ServiceAccounts(pod.Namespace).CreateToken(ctx, sa, req, metav1.CreateOptions{})
	if err != nil {
		return nil, fmt.Errorf("requesting a token for %s/%s: %w", pod.Namespace, sa, err)
	}
	m.mu.Lock()
	m.prune(now)
	m.tokens[key] = cachedToken{token: tr.Status.Token, issued: now, expires: tr.Status.ExpirationTimestamp.Time}
	m.mu.Unlock()
	return []byte(tr.Status.Token), nil
}

// needsRefresh is kubelet's rule: renew after 80 % of the lifetime or 24 h.
func needsRefresh(c cachedToken, now time.Time) bool {
	refresh := c.issued.Add(c.expires.Sub(c.issued) * 8 / 10)
	if limit := c.issued.Add(maxTokenAge); limit.Before(refresh) {
		refresh = limit
	}
	return !now.Before(refresh)
}

// prune drops expired tokens (pods that are gone stop asking for theirs).
func (m *tokenManager) prune(now time.Time) {
	for k, c := range m.tokens {
		if !now.Before(c.expires) {
			delete(m.tokens, k)
		}
	}
}

// tokenSources are apiSources that also mint tokens.
type tokenSources struct {
	apiSources
	*tokenManager
}
