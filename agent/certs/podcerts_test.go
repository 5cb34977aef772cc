package certs

import (
	"context"
	"crypto"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"
	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/utils/ptr"

	"github.com/orch/orch/agent/volumes"
)

// pcrEnv is a fake API with a node, a ServiceAccount and a pod, and a
// running PodCerts whose clock the test moves.
type pcrEnv struct {
	cs      *fake.Clientset
	m       *PodCerts
	pod     *corev1.Pod
	proj    *corev1.PodCertificateProjection
	now     time.Time
	mu      sync.Mutex
	resyncs atomic.Int32
}

func newPCREnv(t *testing.T) *pcrEnv {
	t.Helper()
	e := &pcrEnv{now: time.Now()}
	e.pod = &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "app", UID: "pod-uid"},
		Spec: corev1.PodSpec{NodeName: "n1", ServiceAccountName: "sa"}}
	e.cs = fake.NewClientset(
		&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1", UID: "node-uid"}},
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "sa", UID: "sa-uid"}}, e.pod)
	var n atomic.Int32
	e.cs.PrependReactor("create", "podcertificaterequests", func(a k8stesting.Action) (bool, runtime.Object, error) {
		r := a.(k8stesting.CreateAction).GetObject().(*certificatesv1.PodCertificateRequest)
		if r.Name == "" {
			r.Name = fmt.Sprintf("%s%d", r.GenerateName, n.Add(1))
		}
		r.CreationTimestamp = metav1.Now()
		return false, nil, nil // the tracker stores it
	})
	e.proj = &corev1.PodCertificateProjection{SignerName: "ex.com/s", KeyType: "ED25519", CredentialBundlePath: "c.pem",
		UserAnnotations: map[string]string{"ex.com/path": "/x"}}
	e.m = NewPodCerts(PodCertsConfig{Client: e.cs, NodeName: "n1", Log: zaptest.NewLogger(t),
		Now: func() time.Time { e.mu.Lock(); defer e.mu.Unlock(); return e.now }, Jitter: func() time.Duration { return 0 }})
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go e.m.Run(ctx, func(ns, name string) {
		if ns == "ns" && name == "app" {
			e.resyncs.Add(1)
		}
	})
	return e
}

func (e *pcrEnv) get(t *testing.T) ([]byte, []byte, error) {
	t.Helper()
	return e.m.PodCertificate(context.Background(), e.pod, "tls", 0, e.proj)
}

// eventually retries f for a few seconds (the informer catches up).
func eventually(t *testing.T, what string, f func() error) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		err := f()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: %v", what, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (e *pcrEnv) requests(t *testing.T) []certificatesv1.PodCertificateRequest {
	t.Helper()
	l, err := e.cs.CertificatesV1().PodCertificateRequests("ns").List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return l.Items
}

// issue signs the request's stub key with a throw-away CA and records it
// in the status, refresh at half-life.
func (e *pcrEnv) issue(t *testing.T, r certificatesv1.PodCertificateRequest) string {
	t.Helper()
	stub, err := x509.ParseCertificateRequest(r.Spec.StubPKCS10Request)
	if err != nil {
		t.Fatal(err)
	}
	_, caKey, _ := ed25519.GenerateKey(rand.Reader)
	nb := e.now.Add(-time.Minute).Truncate(time.Second)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(7), NotBefore: nb, NotAfter: nb.Add(2 * time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, stub.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	chain := string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
	r.Status = certificatesv1.PodCertificateRequestStatus{CertificateChain: "junk between blocks\n" + chain,
		NotBefore: ptr.To(metav1.NewTime(nb)), NotAfter: ptr.To(metav1.NewTime(nb.Add(2 * time.Hour))),
		BeginRefreshAt: ptr.To(metav1.NewTime(nb.Add(time.Hour))),
		Conditions:     []metav1.Condition{{Type: "Issued", Status: "True", Reason: "T", Message: "ok"}}}
	if _, err := e.cs.CertificatesV1().PodCertificateRequests("ns").UpdateStatus(context.Background(), &r, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	return chain
}

// TestPodCerts: the first call requests a certificate for the pod and
// reports it pending; once issued, the key and the cleaned chain come
// back and the pod was resynced; at beginRefreshAt a new request is made
// while the old credentials stay; a denied refresh is final.
func TestPodCerts(t *testing.T) {
	e := newPCREnv(t)
	eventually(t, "running", func() error { _, _, err := e.get(t); return okIfPending(err) })
	reqs := e.requests(t)
	if len(reqs) != 1 {
		t.Fatalf("%d requests, want 1", len(reqs))
	}
	s := reqs[0].Spec
	if s.PodName != "app" || s.PodUID != "pod-uid" || s.ServiceAccountUID != "sa-uid" || s.NodeName != "n1" || s.NodeUID != "node-uid" ||
		s.SignerName != "ex.com/s" || s.UnverifiedUserAnnotations["ex.com/path"] != "/x" || reqs[0].OwnerReferences[0].UID != "pod-uid" {
		t.Fatalf("request spec %+v", s)
	}
	if _, _, err := e.get(t); !errors.Is(err, volumes.ErrCertificatePending) {
		t.Fatalf("before issuance: %v", err)
	}
	chain := e.issue(t, reqs[0])
	var key, got []byte
	eventually(t, "issued credentials", func() error {
		var err error
		key, got, err = e.get(t)
		return err
	})
	if string(got) != chain {
		t.Fatalf("chain %q, want the cleaned %q", got, chain)
	}
	checkKeyMatches(t, key, got)
	if e.resyncs.Load() == 0 {
		t.Fatal("the pod was not resynced when its request changed")
	}

	e.mu.Lock()
	e.now = e.now.Add(time.Hour)
	e.mu.Unlock()
	if _, again, err := e.get(t); err != nil || string(again) != chain {
		t.Fatalf("refresh time: old credentials %v", err)
	}
	reqs = e.requests(t)
	if len(reqs) != 2 {
		t.Fatalf("%d requests after beginRefreshAt, want 2", len(reqs))
	}
	refresh := reqs[1]
	if refresh.Name == "req-1" {
		refresh = reqs[0]
	}
	// deny denies every request still waiting: the refresh, or a request
	// made again when the informer had not yet seen the refresh (the source
	// re-requests one it cannot find).
	deny := func() {
		for _, r := range e.requests(t) {
			if len(r.Status.Conditions) > 0 || r.Name == reqs[0].Name && refresh.Name != reqs[0].Name {
				continue
			}
			r.Status.Conditions = []metav1.Condition{{Type: "Denied", Status: "True", Reason: "Policy", Message: "no"}}
			if _, err := e.cs.CertificatesV1().PodCertificateRequests("ns").UpdateStatus(context.Background(), &r, metav1.UpdateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
	}
	deny()
	tries := 0
	eventually(t, "denied", func() error {
		if _, _, err := e.get(t); err == nil || !strings.Contains(err.Error(), "permanently denied") {
			// client-go's fake clientset can lose a watch event that races
			// the informer's list-then-watch; a fresh update is a new event.
			if tries++; tries%25 == 0 {
				deny()
			}
			return fmt.Errorf("got %v", err)
		}
		return nil
	})
	e.m.Forget("pod-uid")
	if _, _, err := e.get(t); !errors.Is(err, volumes.ErrCertificatePending) {
		t.Fatalf("after Forget the source starts over: %v", err)
	}
}

func okIfPending(err error) error {
	if errors.Is(err, volumes.ErrCertificatePending) {
		return nil
	}
	if err == nil {
		return errors.New("credentials before any request")
	}
	return err
}

// checkKeyMatches: the PEM key is the private half of the leaf's key.
func checkKeyMatches(t *testing.T, keyPEM, chainPEM []byte) {
	t.Helper()
	kb, _ := pem.Decode(keyPEM)
	cb, _ := pem.Decode(chainPEM)
	if kb == nil || kb.Type != "PRIVATE KEY" || cb == nil {
		t.Fatalf("key %q chain %q", keyPEM, chainPEM)
	}
	key, err := x509.ParsePKCS8PrivateKey(kb.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(cb.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	if !key.(crypto.Signer).Public().(interface{ Equal(crypto.PublicKey) bool }).Equal(cert.PublicKey) {
		t.Fatal("the key does not match the certificate")
	}
}

// TestNewKeyAndStub: every key type upstream allows makes a stub request
// signed by its key.
func TestNewKeyAndStub(t *testing.T) {
	for _, kt := range []string{"ECDSAP256", "ECDSAP384", "ECDSAP521", "ED25519", "RSA3072"} {
		_, stub, err := newKeyAndStub(kt)
		if err != nil {
			t.Fatalf("%s: %v", kt, err)
		}
		req, err := x509.ParseCertificateRequest(stub)
		if err != nil || req.CheckSignature() != nil {
			t.Fatalf("%s: stub %v", kt, err)
		}
	}
	if _, _, err := newKeyAndStub("DSA"); err == nil {
		t.Fatal("unknown key type accepted")
	}
}
