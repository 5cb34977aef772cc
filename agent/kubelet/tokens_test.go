package kubelet

import (
	"context"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/utils/ptr"
)

func TestNeedsRefresh(t *testing.T) {
	t0 := time.Unix(1_000_000, 0)
	tests := []struct {
		name string
		life time.Duration
		at   time.Duration
		want bool
	}{
		{"fresh", time.Hour, 10 * time.Minute, false},
		{"at 80%", time.Hour, 48 * time.Minute, true},
		{"just before 80%", time.Hour, 47 * time.Minute, false},
		{"long token after 24h", 7 * 24 * time.Hour, 24 * time.Hour, true},
		{"long token before 24h", 7 * 24 * time.Hour, 23 * time.Hour, false},
	}
	for _, tt := range tests {
		c := cachedToken{issued: t0, expires: t0.Add(tt.life)}
		if got := needsRefresh(c, t0.Add(tt.at)); got != tt.want {
			t.Errorf("%s: needsRefresh = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestTokenManagerRequestsBoundTokensAndCaches(t *testing.T) {
	client := fake.NewSimpleClientset()
	var reqs []*authenticationv1.TokenRequest
	client.PrependReactor("create", "serviceaccounts", func(a k8stesting.Action) (bool, runtime.Object, error) {
		tr := a.(k8stesting.CreateAction).GetObject().(*authenticationv1.TokenRequest).DeepCopy()
		reqs = append(reqs, tr)
		tr.Status = authenticationv1.TokenRequestStatus{Token: "tok", ExpirationTimestamp: metav1.NewTime(time.Now().Add(time.Hour))}
		return true, tr, nil
	})
	m := newTokenManager(client)
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns", UID: "u1"}}
	proj := &corev1.ServiceAccountTokenProjection{Path: "token", ExpirationSeconds: ptr.To[int64](3607), Audience: "vault"}
	for range 2 {
		tok, err := m.ServiceAccountToken(context.Background(), pod, proj)
		if err != nil || string(tok) != "tok" {
			t.Fatalf("token %q, %v", tok, err)
		}
	}
	if len(reqs) != 1 {
		t.Fatalf("%d token requests, want 1 (the second is cached)", len(reqs))
	}
	r := reqs[0].Spec
	if r.BoundObjectRef == nil || r.BoundObjectRef.UID != "u1" || r.BoundObjectRef.Kind != "Pod" ||
		len(r.Audiences) != 1 || r.Audiences[0] != "vault" || *r.ExpirationSeconds != 3607 {
		t.Fatalf("token request %+v", r)
	}
	m.now = func() time.Time { return time.Now().Add(50 * time.Minute) }
	if _, err := m.ServiceAccountToken(context.Background(), pod, proj); err != nil || len(reqs) != 2 {
		t.Fatalf("no refresh after 80%% of the lifetime: %d requests, %v", len(reqs), err)
	}
}
