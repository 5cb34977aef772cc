package e2e

import (
	"bytes"
	"context"
	"crypto"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"strings"
	"testing"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
)

// newCA is a self-signed Ed25519 CA: its key and PEM certificate.
func newCA(t *testing.T, cn string) (ed25519.PrivateKey, *x509.Certificate, string) {
	t.Helper()
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: cn}, IsCA: true,
		BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, pub, priv)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	return priv, cert, string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
}

func createCTB(t *testing.T, cs kubernetes.Interface, name, signer, bundle string, labels map[string]string) {
	t.Helper()
	_, err := cs.CertificatesV1().ClusterTrustBundles().Create(context.Background(), &certificatesv1.ClusterTrustBundle{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
		Spec:       certificatesv1.ClusterTrustBundleSpec{SignerName: signer, TrustBundle: bundle}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating ClusterTrustBundle %s: %v", name, err)
	}
	t.Cleanup(func() {
		_ = cs.CertificatesV1().ClusterTrustBundles().Delete(context.Background(), name, metav1.DeleteOptions{})
	})
}

func podLogs(t *testing.T, cs kubernetes.Interface, name string) string {
	t.Helper()
	b, err := cs.CoreV1().Pods("default").GetLogs(name, &corev1.PodLogOptions{}).DoRaw(context.Background())
	if err != nil {
		return ""
	}
	return string(b)
}

func projectedPod(name, script string, srcs ...corev1.VolumeProjection) *corev1.Pod {
	c := bbContainer("c", script)
	c.VolumeMounts = []corev1.VolumeMount{{Name: "trust", MountPath: "/trust"}}
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.PodSpec{
		RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{c},
		Volumes: []corev1.Volume{{Name: "trust", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: srcs}}}}}}
}

// TestTrustProjections runs real pods with clusterTrustBundle and
// podCertificate projected volumes on a real agent.
func TestTrustProjections(t *testing.T) {
	e := startCluster(t)
	cs := e.server.Clientset
	waitNodeReady(t, e, true)
	t.Run("ClusterTrustBundles", func(t *testing.T) { trustBundlePod(t, cs) })
	t.Run("MissingBundleHoldsThePod", func(t *testing.T) { missingBundle(t, cs) })
	t.Run("PodCertificate", func(t *testing.T) { podCertificatePod(t, cs) })
}

// trustBundlePod: a bundle by name, a signer's bundles picked by label
// (the other label's bundle left out) and an optional missing bundle
// (an empty file) reach the pod's files.
func trustBundlePod(t *testing.T, cs kubernetes.Interface) {
	_, _, plain := newCA(t, "plain")
	_, _, live := newCA(t, "live")
	_, _, dead := newCA(t, "dead")
	createCTB(t, cs, "e2e-plain", "", plain, nil)
	createCTB(t, cs, "e2e.example:s:live", "e2e.example/s", live, map[string]string{"alive": "true"})
	createCTB(t, cs, "e2e.example:s:dead", "e2e.example/s", dead, map[string]string{"alive": "false"})
	createPod(t, cs, projectedPod("ctb", "for f in name signer optional; do echo \"== $f\"; cat /trust/$f.pem; done",
		corev1.VolumeProjection{ClusterTrustBundle: &corev1.ClusterTrustBundleProjection{Name: ptr.To("e2e-plain"), Path: "name.pem"}},
		corev1.VolumeProjection{ClusterTrustBundle: &corev1.ClusterTrustBundleProjection{SignerName: ptr.To("e2e.example/s"),
			LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"alive": "true"}}, Path: "signer.pem"}},
		corev1.VolumeProjection{ClusterTrustBundle: &corev1.ClusterTrustBundleProjection{Name: ptr.To("e2e-none"),
			Optional: ptr.To(true), Path: "optional.pem"}}))
	waitPod(t, cs, "ctb", "Succeeded", func(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodSucceeded })
	want := "== name\n" + plain + "== signer\n" + live + "== optional\n"
	if got := podLogs(t, cs, "ctb"); got != want {
		t.Fatalf("pod output:\n%s\nwant:\n%s", got, want)
	}
}

// missingBundle: a required bundle that does not exist keeps the pod
// from starting (ContainersNotReady, a FailedMount event); creating the
// bundle lets it start.
func missingBundle(t *testing.T, cs kubernetes.Interface) {
	createPod(t, cs, projectedPod("ctb-missing", "cat /trust/b.pem",
		corev1.VolumeProjection{ClusterTrustBundle: &corev1.ClusterTrustBundleProjection{Name: ptr.To("e2e-later"), Path: "b.pem"}}))
	waitPod(t, cs, "ctb-missing", "waiting for its volume", func(p *corev1.Pod) bool {
		for _, c := range p.Status.Conditions {
			if c.Type == corev1.PodReady && c.Reason == "ContainersNotReady" && c.Message == "containers with unready status: [c]" {
				return p.Status.Phase == corev1.PodPending
			}
		}
		return false
	})
	waitFor(t, 30*time.Second, "a FailedMount event", func() (bool, error) {
		evs, err := cs.CoreV1().Events("default").List(context.Background(), metav1.ListOptions{FieldSelector: "involvedObject.name=ctb-missing"})
		if err != nil {
			return false, err
		}
		for _, ev := range evs.Items {
			if ev.Reason == "FailedMount" && strings.Contains(ev.Message, "e2e-later") {
				return true, nil
			}
		}
		return false, nil
	})
	time.Sleep(5 * time.Second)
	if p, _ := cs.CoreV1().Pods("default").Get(context.Background(), "ctb-missing", metav1.GetOptions{}); p.Status.Phase != corev1.PodPending {
		t.Fatalf("pod without its bundle is %s", p.Status.Phase)
	}
	_, _, later := newCA(t, "later")
	createCTB(t, cs, "e2e-later", "", later, nil)
	waitPod(t, cs, "ctb-missing", "Succeeded once the bundle exists", func(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodSucceeded })
	if got := podLogs(t, cs, "ctb-missing"); got != later {
		t.Fatalf("pod output %q, want the bundle", got)
	}
}

// podCertificatePod: the agent requests a certificate for the pod, a
// signer (this test) issues it, and the pod starts with the key and the
// chain in its credential bundle.
func podCertificatePod(t *testing.T, cs kubernetes.Interface) {
	const signer = "e2e.example/pods"
	caKey, caCert, _ := newCA(t, "pods-ca")
	createPod(t, cs, projectedPod("pcr", "cat /trust/creds.pem",
		corev1.VolumeProjection{PodCertificate: &corev1.PodCertificateProjection{SignerName: signer, KeyType: "ECDSAP256",
			CredentialBundlePath: "creds.pem", MaxExpirationSeconds: ptr.To[int32](3600)}}))
	var req *certificatesv1.PodCertificateRequest
	waitFor(t, 60*time.Second, "the agent's PodCertificateRequest", func() (bool, error) {
		l, err := cs.CertificatesV1().PodCertificateRequests("default").List(context.Background(),
			metav1.ListOptions{FieldSelector: "spec.podName=pcr"})
		if err != nil || len(l.Items) == 0 {
			return false, err
		}
		req = &l.Items[0]
		return true, nil
	})
	if req.Spec.SignerName != signer || ptr.Deref(req.Spec.MaxExpirationSeconds, 0) != 3600 || req.Spec.ServiceAccountName != "default" {
		t.Fatalf("request spec %+v", req.Spec)
	}
	chain := signPCR(t, cs, req, caKey, caCert)
	waitPod(t, cs, "pcr", "Succeeded once issued", func(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodSucceeded })
	out := podLogs(t, cs, "pcr")
	kb, rest := pem.Decode([]byte(out))
	if kb == nil || kb.Type != "PRIVATE KEY" || string(rest) != chain {
		t.Fatalf("credential bundle %q: want a PRIVATE KEY then the chain", out)
	}
	key, err := x509.ParsePKCS8PrivateKey(kb.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	cb, _ := pem.Decode([]byte(chain))
	leaf, _ := x509.ParseCertificate(cb.Bytes)
	if !key.(crypto.Signer).Public().(interface{ Equal(crypto.PublicKey) bool }).Equal(leaf.PublicKey) {
		t.Fatal("the pod's key is not the certificate's")
	}
}

// signPCR issues req as a signer would: a one-hour leaf for its key.
func signPCR(t *testing.T, cs kubernetes.Interface, req *certificatesv1.PodCertificateRequest, caKey ed25519.PrivateKey, ca *x509.Certificate) string {
	t.Helper()
	stub, err := x509.ParseCertificateRequest(req.Spec.StubPKCS10Request)
	if err != nil {
		t.Fatal(err)
	}
	nb := time.Now().Add(-time.Minute).Truncate(time.Second)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "pcr"}, NotBefore: nb, NotAfter: nb.Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, stub.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	var chain bytes.Buffer
	_ = pem.Encode(&chain, &pem.Block{Type: "CERTIFICATE", Bytes: der})
	_ = pem.Encode(&chain, &pem.Block{Type: "CERTIFICATE", Bytes: ca.Raw})
	r := req.DeepCopy()
	r.Status = certificatesv1.PodCertificateRequestStatus{CertificateChain: chain.String(),
		NotBefore: ptr.To(metav1.NewTime(nb)), NotAfter: ptr.To(metav1.NewTime(nb.Add(time.Hour))),
		BeginRefreshAt: ptr.To(metav1.NewTime(nb.Add(30 * time.Minute))),
		Conditions: []metav1.Condition{{Type: certificatesv1.PodCertificateRequestConditionTypeIssued, Status: metav1.ConditionTrue,
			Reason: "E2E", Message: "issued by the test", LastTransitionTime: metav1.Now()}}}
	if _, err := cs.CertificatesV1().PodCertificateRequests(r.Namespace).UpdateStatus(context.Background(), r, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("issuing %s: %v", r.Name, err)
	}
	return fmt.Sprint(chain.String())
}
