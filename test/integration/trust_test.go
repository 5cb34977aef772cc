package integration

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"slices"
	"strings"
	"testing"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	"github.com/orch/orch/test/testutil"
)

// caPEM makes a self-signed CA certificate.
func caPEM(t *testing.T, cn string) string {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	must(t, err, "key")
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: cn}, IsCA: true,
		BasicConstraintsValid: true, NotBefore: time.Now(), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	must(t, err, "certificate")
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
}

// TestClusterTrustBundles: the API is discovered; names follow the
// signer; bundles must be distinct CA certificates; naming a signer needs
// attest on it; spec.signerName selects.
func TestClusterTrustBundles(t *testing.T) {
	s := testutil.StartServer(t, testutil.Options{Quiet: true, ExtraArgs: []string{"--disable-agent"}})
	ctx := ctxT(t)
	disc, err := s.Clientset.Discovery().ServerResourcesForGroupVersion("certificates.k8s.io/v1")
	must(t, err, "discovery")
	var names []string
	for _, r := range disc.APIResources {
		names = append(names, r.Name)
	}
	for _, want := range []string{"clustertrustbundles", "podcertificaterequests", "podcertificaterequests/status"} {
		if !slices.Contains(names, want) {
			t.Fatalf("discovery lacks %s: %v", want, names)
		}
	}
	ctbs := s.Clientset.CertificatesV1().ClusterTrustBundles()
	ca := caPEM(t, "it-root")
	ctb := func(name, signer, bundle string) *certificatesv1.ClusterTrustBundle {
		return &certificatesv1.ClusterTrustBundle{ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: certificatesv1.ClusterTrustBundleSpec{SignerName: signer, TrustBundle: bundle}}
	}
	for _, c := range []struct {
		what string
		obj  *certificatesv1.ClusterTrustBundle
		msg  string
	}{
		{"wrong prefix", ctb("it.example:other:x", "it.example/signer", ca), "must be named with prefix it.example:signer:"},
		{"colon without signer", ctb("a:b", "", ca), `must not have ":" in its name`},
		{"duplicate", ctb("it-dup", "", ca+ca), "duplicate trust anchor"},
		{"empty", ctb("it-empty", "", ""), "at least one trust anchor must be provided"},
		{"not a CA", ctb("it-leaf", "", leafPEM(t)), "does not have the CA bit set"},
	} {
		_, err := ctbs.Create(ctx, c.obj, metav1.CreateOptions{})
		if st := wantCode(t, err, 422, c.what); !strings.Contains(st.Message, c.msg) {
			t.Fatalf("%s: message %q lacks %q", c.what, st.Message, c.msg)
		}
	}
	_, err = ctbs.Create(ctx, ctb("it.example:signer:one", "it.example/signer", ca), metav1.CreateOptions{})
	must(t, err, "create with signer")
	t.Cleanup(func() { _ = ctbs.Delete(ctxT(t), "it.example:signer:one", metav1.DeleteOptions{}) })
	_, err = ctbs.Create(ctx, ctb("it-nosigner", "", caPEM(t, "other")), metav1.CreateOptions{})
	must(t, err, "create without signer")
	t.Cleanup(func() { _ = ctbs.Delete(ctxT(t), "it-nosigner", metav1.DeleteOptions{}) })
	list, err := ctbs.List(ctx, metav1.ListOptions{FieldSelector: "spec.signerName=it.example/signer"})
	must(t, err, "list by signer")
	if len(list.Items) != 1 || list.Items[0].Name != "it.example:signer:one" {
		t.Fatalf("list by signer: %v", list.Items)
	}
	got, err := ctbs.Get(ctx, "it.example:signer:one", metav1.GetOptions{})
	must(t, err, "get")
	got.Spec.SignerName = "it.example/other"
	_, err = ctbs.Update(ctx, got, metav1.UpdateOptions{})
	wantCode(t, err, 422, "changing the signer")

	ns := newNamespace(t, s.Clientset)
	bot := newRBACSubject(t, s, ns, "bundler")
	grantCluster(t, s, "it-ctb-"+ns, bot.subject(), rbacv1.PolicyRule{Verbs: []string{"create"},
		APIGroups: []string{"certificates.k8s.io"}, Resources: []string{"clustertrustbundles"}})
	waitFor(t, "the bundler's binding", func() error {
		_, err := bot.cs.CertificatesV1().ClusterTrustBundles().Create(ctx, ctb("it-bot-"+ns, "", caPEM(t, "bot")), metav1.CreateOptions{})
		return err
	})
	t.Cleanup(func() { _ = ctbs.Delete(ctxT(t), "it-bot-"+ns, metav1.DeleteOptions{}) })
	_, err = bot.cs.CertificatesV1().ClusterTrustBundles().Create(ctx, ctb("it.example:signer:bot", "it.example/signer", caPEM(t, "b")), metav1.CreateOptions{})
	if st := wantCode(t, err, 403, "a signer without attest"); !strings.Contains(st.Message, `user not permitted to attest for signerName "it.example/signer"`) {
		t.Fatalf("message %q", st.Message)
	}
}

func leafPEM(t *testing.T) string {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	must(t, err, "key")
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "leaf"},
		NotBefore: time.Now(), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	must(t, err, "certificate")
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
}

// nodeClient impersonates the agent of node.
func nodeClient(t *testing.T, s *testutil.Server, node string) kubernetes.Interface {
	t.Helper()
	cfg := rest.CopyConfig(s.Config)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: "system:node:" + node, Groups: []string{"system:nodes", "system:authenticated"}}
	cs, err := kubernetes.NewForConfig(cfg)
	must(t, err, "node client")
	return cs
}

// pcrFixture is a Node, a ServiceAccount and a pod bound to the node
// with a podCertificate volume for signer.
type pcrFixture struct {
	ns     string
	node   *corev1.Node
	sa     *corev1.ServiceAccount
	pod    *corev1.Pod
	signer string
}

func newPCRFixture(t *testing.T, s *testutil.Server) pcrFixture {
	t.Helper()
	ctx := ctxT(t)
	ns := newNamespace(t, s.Clientset)
	f := pcrFixture{ns: ns, signer: "it.example/pods"}
	var err error
	f.node, err = s.Clientset.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "it-pcr-" + ns}}, metav1.CreateOptions{})
	must(t, err, "node")
	t.Cleanup(func() { _ = s.Clientset.CoreV1().Nodes().Delete(ctxT(t), f.node.Name, metav1.DeleteOptions{}) })
	f.sa, err = s.Clientset.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "certs"}}, metav1.CreateOptions{})
	must(t, err, "service account")
	vol := corev1.Volume{Name: "tls", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
		Sources: []corev1.VolumeProjection{{PodCertificate: &corev1.PodCertificateProjection{
			SignerName: f.signer, KeyType: "ECDSAP256", CredentialBundlePath: "creds.pem"}}}}}}
	f.pod, err = s.Clientset.CoreV1().Pods(ns).Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "app"},
		Spec: corev1.PodSpec{NodeName: f.node.Name, ServiceAccountName: "certs", Volumes: []corev1.Volume{vol},
			Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}}, metav1.CreateOptions{})
	must(t, err, "pod")
	return f
}

// request is the PodCertificateRequest the node would send for the pod.
func (f pcrFixture) request(t *testing.T, key *ecdsa.PrivateKey) *certificatesv1.PodCertificateRequest {
	t.Helper()
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{}, key)
	must(t, err, "stub request")
	return &certificatesv1.PodCertificateRequest{ObjectMeta: metav1.ObjectMeta{GenerateName: "req-"},
		Spec: certificatesv1.PodCertificateRequestSpec{SignerName: f.signer, PodName: f.pod.Name, PodUID: f.pod.UID,
			ServiceAccountName: f.sa.Name, ServiceAccountUID: f.sa.UID, NodeName: types.NodeName(f.node.Name), NodeUID: f.node.UID,
			StubPKCS10Request: der}}
}

// TestPodCertificateRequests: a node requests certificates only for its
// own pods, with their real UIDs and for signers they name, and lists
// only its own requests; maxExpirationSeconds defaults to a day; only
// signers issue, with a certificate of the requested key whose times
// the status repeats, and an issued request never changes again.
func TestPodCertificateRequests(t *testing.T) {
	s := testutil.StartServer(t, testutil.Options{Quiet: true, ExtraArgs: []string{"--disable-agent"}})
	ctx := ctxT(t)
	f := newPCRFixture(t, s)
	node := nodeClient(t, s, f.node.Name).CertificatesV1().PodCertificateRequests(f.ns)
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	must(t, err, "key")
	for _, c := range []struct {
		what   string
		change func(*certificatesv1.PodCertificateRequest)
		code   int32
		msg    string
	}{
		{"another node", func(r *certificatesv1.PodCertificateRequest) { r.Spec.NodeName = "elsewhere" }, 403, "which is not the requesting node"},
		{"a signer the pod does not name", func(r *certificatesv1.PodCertificateRequest) { r.Spec.SignerName = "it.example/other" }, 403,
			"does not mount a podCertificate projected volume"},
		{"a stale pod UID", func(r *certificatesv1.PodCertificateRequest) { r.Spec.PodUID = "stale" }, 500, "differs from running pod"},
		{"too long a lifetime", func(r *certificatesv1.PodCertificateRequest) {
			r.Spec.MaxExpirationSeconds = ptr.To[int32](91*86400 + 1)
		}, 422,
			"must be in the range [3600, 7862400]"},
	} {
		r := f.request(t, key)
		c.change(r)
		_, err := node.Create(ctx, r, metav1.CreateOptions{})
		if st := wantCode(t, err, c.code, c.what); !strings.Contains(st.Message, c.msg) {
			t.Fatalf("%s: message %q lacks %q", c.what, st.Message, c.msg)
		}
	}
	pcr, err := node.Create(ctx, f.request(t, key), metav1.CreateOptions{})
	must(t, err, "the node's request")
	if ptr.Deref(pcr.Spec.MaxExpirationSeconds, 0) != 86400 {
		t.Fatalf("maxExpirationSeconds %v, want the default 86400", pcr.Spec.MaxExpirationSeconds)
	}
	_, err = node.List(ctx, metav1.ListOptions{})
	wantCode(t, err, 403, "a node listing every request")
	mine, err := node.List(ctx, metav1.ListOptions{FieldSelector: "spec.nodeName=" + f.node.Name})
	must(t, err, "a node listing its own requests")
	if len(mine.Items) != 1 {
		t.Fatalf("own requests: %d", len(mine.Items))
	}
	_, err = node.UpdateStatus(ctx, issue(t, pcr, key, time.Hour), metav1.UpdateOptions{})
	wantCode(t, err, 403, "a node issuing")
	admin := s.Clientset.CertificatesV1().PodCertificateRequests(f.ns)
	bad := issue(t, pcr, key, time.Hour)
	bad.Status.NotAfter = ptr.To(metav1.NewTime(bad.Status.NotAfter.Add(time.Minute)))
	_, err = admin.UpdateStatus(ctx, bad, metav1.UpdateOptions{})
	wantCode(t, err, 422, "notAfter not the certificate's")
	other, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	must(t, err, "key")
	_, err = admin.UpdateStatus(ctx, issue(t, pcr, other, time.Hour), metav1.UpdateOptions{})
	wantCode(t, err, 422, "a certificate of another key")
	issued, err := admin.UpdateStatus(ctx, issue(t, pcr, key, time.Hour), metav1.UpdateOptions{})
	must(t, err, "the signer issuing")
	_, err = admin.UpdateStatus(ctx, issue(t, issued, key, 2*time.Hour), metav1.UpdateOptions{})
	wantCode(t, err, 422, "re-issuing")
}

// issue returns r with a status issuing a certificate for key, valid for
// d from a minute ago.
func issue(t *testing.T, r *certificatesv1.PodCertificateRequest, key *ecdsa.PrivateKey, d time.Duration) *certificatesv1.PodCertificateRequest {
	t.Helper()
	nb := time.Now().Add(-time.Minute).Truncate(time.Second)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(3), NotBefore: nb, NotAfter: nb.Add(d)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	must(t, err, "certificate")
	r = r.DeepCopy()
	r.Status = certificatesv1.PodCertificateRequestStatus{
		CertificateChain: string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})),
		NotBefore:        ptr.To(metav1.NewTime(nb)), NotAfter: ptr.To(metav1.NewTime(nb.Add(d))),
		BeginRefreshAt: ptr.To(metav1.NewTime(nb.Add(d / 2))),
		Conditions: []metav1.Condition{{Type: certificatesv1.PodCertificateRequestConditionTypeIssued, Status: metav1.ConditionTrue,
			Reason: "IT", Message: "issued", LastTransitionTime: metav1.Now()}},
	}
	return r
}

// TestPodCertificateProjectionBounds: pods are refused with upstream's
// messages when a podCertificate projection asks for less than an hour
// or more than 91 days (a day for kubernetes.io signers).
func TestPodCertificateProjectionBounds(t *testing.T) {
	s := testutil.StartServer(t, testutil.Options{Quiet: true, ExtraArgs: []string{"--disable-agent"}})
	ns := newNamespace(t, s.Clientset)
	for _, c := range []struct {
		signer string
		secs   int32
		msg    string
	}{
		{"it.example/a", 3599, "if provided, maxExpirationSeconds must be >= 3600"},
		{"it.example/a", 91*86400 + 1, "if provided, maxExpirationSeconds must be <= 7862400"},
		{"kubernetes.io/a", 86401, "if provided, maxExpirationSeconds must be <= 86400"},
	} {
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p"}, Spec: corev1.PodSpec{
			Containers: []corev1.Container{{Name: "c", Image: "busybox"}},
			Volumes: []corev1.Volume{{Name: "v", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
				Sources: []corev1.VolumeProjection{{PodCertificate: &corev1.PodCertificateProjection{SignerName: c.signer,
					KeyType: "ED25519", CredentialBundlePath: "c.pem", MaxExpirationSeconds: ptr.To(c.secs)}}}}}}}}}
		_, err := s.Clientset.CoreV1().Pods(ns).Create(ctxT(t), pod, metav1.CreateOptions{})
		if st := wantCode(t, err, 422, c.msg); !strings.Contains(st.Message, c.msg) {
			t.Fatalf("message %q lacks %q", st.Message, c.msg)
		}
	}
}
