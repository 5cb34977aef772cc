package satoken

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

type memObjects struct {
	sas     map[string]*corev1.ServiceAccount
	pods    map[string]*corev1.Pod
	secrets map[string]*corev1.Secret
}

func (m memObjects) ServiceAccount(_ context.Context, ns, n string) (*corev1.ServiceAccount, error) {
	return m.sas[ns+"/"+n], nil
}
func (m memObjects) Pod(_ context.Context, ns, n string) (*corev1.Pod, error) {
	return m.pods[ns+"/"+n], nil
}
func (m memObjects) Secret(_ context.Context, ns, n string) (*corev1.Secret, error) {
	return m.secrets[ns+"/"+n], nil
}

func newKey(t *testing.T) *ecdsa.PrivateKey {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func TestTokens(t *testing.T) {
	key := newKey(t)
	const iss = "https://kubernetes.default.svc.cluster.local"
	issuer, err := NewIssuer(key, iss, nil)
	if err != nil {
		t.Fatal(err)
	}
	objs := memObjects{
		sas:     map[string]*corev1.ServiceAccount{"ns/sa": {ObjectMeta: metav1.ObjectMeta{Name: "sa", Namespace: "ns", UID: "sa-uid"}}},
		pods:    map[string]*corev1.Pod{"ns/p": {ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns", UID: "pod-uid"}}},
		secrets: map[string]*corev1.Secret{},
	}
	authn := NewAuthenticator(&key.PublicKey, iss, issuer.APIAudiences(), objs)
	base := Request{Namespace: "ns", ServiceAccount: Ref{Name: "sa", UID: "sa-uid"}, Expiration: time.Hour}
	mint := func(mod func(*Request), iss *Issuer) string {
		r := base
		if mod != nil {
			mod(&r)
		}
		tok, _, err := iss.Issue(r)
		if err != nil {
			t.Fatal(err)
		}
		return tok
	}
	past := &Issuer{key: key, kid: issuer.kid, issuer: iss, audiences: issuer.audiences,
		now: func() time.Time { return time.Now().Add(-2 * time.Hour) }}
	other, _ := NewIssuer(newKey(t), iss, nil)
	foreign, _ := NewIssuer(key, "https://elsewhere", nil)
	good := mint(nil, issuer)
	tampered := good[:strings.LastIndex(good, ".")] + ".AAAA"
	tests := []struct {
		name    string
		tok     string
		ok      bool
		invalid bool
	}{
		{"valid", good, true, false},
		{"bound to a live pod", mint(func(r *Request) { r.Pod = &Ref{Name: "p", UID: "pod-uid"} }, issuer), true, false},
		{"expired", mint(nil, past), false, true},
		{"forged signature", mint(nil, other), false, true},
		{"tampered signature", tampered, false, true},
		{"wrong audience", mint(func(r *Request) { r.Audiences = []string{"vault"} }, issuer), false, true},
		{"service account recreated", mint(func(r *Request) { r.ServiceAccount.UID = "old" }, issuer), false, true},
		{"service account missing", mint(func(r *Request) { r.ServiceAccount = Ref{Name: "gone"} }, issuer), false, true},
		{"bound pod gone", mint(func(r *Request) { r.Pod = &Ref{Name: "p", UID: "other"} }, issuer), false, true},
		{"bound secret gone", mint(func(r *Request) { r.Secret = &Ref{Name: "s", UID: "x"} }, issuer), false, true},
		{"another issuer's token", mint(nil, foreign), false, false},
		{"not a JWT", "abc", false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, _ := http.NewRequest("GET", "/", nil)
			req.Header.Set("Authorization", "Bearer "+tt.tok)
			u, ok, err := authn.AuthenticateRequest(req)
			if ok != tt.ok || errors.Is(err, ErrInvalid) != tt.invalid {
				t.Fatalf("ok=%v err=%v, want ok=%v invalid=%v", ok, err, tt.ok, tt.invalid)
			}
			if ok && (u.Name != "system:serviceaccount:ns:sa" || u.UID != "sa-uid" || len(u.Groups) != 3) {
				t.Fatalf("user %+v", u)
			}
		})
	}
	// Deleting the pod revokes the token bound to it.
	bound := mint(func(r *Request) { r.Pod = &Ref{Name: "p", UID: "pod-uid"} }, issuer)
	now := metav1.NewTime(time.Now().Add(-time.Second))
	objs.pods["ns/p"] = &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns", UID: types.UID("pod-uid"), DeletionTimestamp: &now}}
	if _, _, err := authn.AuthenticateToken(context.Background(), bound, nil); !errors.Is(err, ErrInvalid) {
		t.Fatalf("token of a deleted pod: %v", err)
	}
}

func TestLegacyTokens(t *testing.T) {
	key := newKey(t)
	iss, _ := NewIssuer(key, "https://kubernetes.default.svc.cluster.local", nil)
	tok, err := iss.IssueLegacy("ns", Ref{Name: "sa", UID: "sa-uid"}, "sa-token")
	if err != nil {
		t.Fatal(err)
	}
	objs := memObjects{
		sas:     map[string]*corev1.ServiceAccount{"ns/sa": {ObjectMeta: metav1.ObjectMeta{Name: "sa", UID: "sa-uid"}}},
		secrets: map[string]*corev1.Secret{"ns/sa-token": {ObjectMeta: metav1.ObjectMeta{Name: "sa-token"}, Data: map[string][]byte{"token": []byte(tok)}}},
	}
	authn := NewAuthenticator(&key.PublicKey, iss.IssuerURL(), iss.APIAudiences(), objs)
	u, ok, err := authn.AuthenticateToken(context.Background(), tok, nil)
	if !ok || err != nil || u.Name != "system:serviceaccount:ns:sa" {
		t.Fatalf("legacy token: %v %v %+v", ok, err, u)
	}
	objs.secrets["ns/sa-token"].Data["token"] = []byte("rotated")
	if _, _, err := authn.AuthenticateToken(context.Background(), tok, nil); !errors.Is(err, ErrInvalid) {
		t.Fatalf("token no longer in its secret: %v", err)
	}
	delete(objs.secrets, "ns/sa-token")
	if _, _, err := authn.AuthenticateToken(context.Background(), tok, nil); !errors.Is(err, ErrInvalid) {
		t.Fatalf("token of a deleted secret: %v", err)
	}
	forged, _ := NewIssuer(newKey(t), "x", nil)
	ftok, _ := forged.IssueLegacy("ns", Ref{Name: "sa", UID: "sa-uid"}, "sa-token")
	if _, _, err := authn.AuthenticateToken(context.Background(), ftok, nil); !errors.Is(err, ErrInvalid) {
		t.Fatalf("forged legacy token: %v", err)
	}
}
