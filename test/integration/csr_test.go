package integration

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/orch/orch/test/testutil"
)

// newCSRPEM makes a key and a PEM certificate request for cn/orgs.
func newCSRPEM(t *testing.T, cn string, orgs []string) (csrPEM, keyPEM []byte) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	must(t, err, "key")
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{
		Subject: pkix.Name{CommonName: cn, Organization: orgs}}, key)
	must(t, err, "csr")
	kder, err := x509.MarshalECPrivateKey(key)
	must(t, err, "key der")
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder})
}

func newCSR(name string, req []byte, usages ...certificatesv1.KeyUsage) *certificatesv1.CertificateSigningRequest {
	return &certificatesv1.CertificateSigningRequest{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: certificatesv1.CertificateSigningRequestSpec{Request: req, SignerName: certificatesv1.KubeAPIServerClientSignerName,
			Usages: usages, ExpirationSeconds: ptr.To(int32(3600))}}
}

func approve(c *certificatesv1.CertificateSigningRequest) *certificatesv1.CertificateSigningRequest {
	c = c.DeepCopy()
	c.Status.Conditions = append(c.Status.Conditions, certificatesv1.CertificateSigningRequestCondition{
		Type: certificatesv1.CertificateApproved, Status: corev1.ConditionTrue, Reason: "ITApprove", Message: "approved by the test"})
	return c
}

// grantCluster binds a new ClusterRole of rules to sub for the test.
func grantCluster(t *testing.T, s *testutil.Server, name string, sub rbacv1.Subject, rules ...rbacv1.PolicyRule) {
	t.Helper()
	ctx := ctxT(t)
	_, err := s.Clientset.RbacV1().ClusterRoles().Create(ctx, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name}, Rules: rules}, metav1.CreateOptions{})
	must(t, err, "role %s", name)
	_, err = s.Clientset.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name},
		RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: name}, Subjects: []rbacv1.Subject{sub}}, metav1.CreateOptions{})
	must(t, err, "binding %s", name)
}

// waitIssued waits for the certificate of the request name.
func waitIssued(t *testing.T, s *testutil.Server, name string) []byte {
	t.Helper()
	var certPEM []byte
	waitFor(t, name+"'s certificate", func() error {
		c, err := s.Clientset.CertificatesV1().CertificateSigningRequests().Get(ctxT(t), name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if certPEM = c.Status.Certificate; len(certPEM) == 0 {
			return fmt.Errorf("no certificate yet: %+v", c.Status.Conditions)
		}
		return nil
	})
	return certPEM
}

// TestCertificateSigningRequests: a user asks for a client certificate,
// the API records who asked (whatever the body claimed), only those
// allowed to approve for the signer may approve and only signers may
// issue, the signer issues a certificate of the cluster CA with the
// requested subject and lifetime, and that certificate authenticates.
// Requests for system:masters, for the legacy signer, with server usages
// or kubelet requests of the wrong subject are refused or failed.
func TestCertificateSigningRequests(t *testing.T) {
	s := testutil.StartServer(t, testutil.Options{Quiet: true, ExtraArgs: []string{"--disable-agent"}})
	ctx := ctxT(t)
	disc, err := s.Clientset.Discovery().ServerResourcesForGroupVersion("certificates.k8s.io/v1")
	must(t, err, "discovery of certificates.k8s.io/v1")
	var names []string
	for _, r := range disc.APIResources {
		names = append(names, r.Name)
	}
	for _, want := range []string{"certificatesigningrequests/approval", "certificatesigningrequests/status"} {
		if !slices.Contains(names, want) {
			t.Fatalf("discovery lacks %s: %v", want, names)
		}
	}
	ns := newNamespace(t, s.Clientset)
	bot := newRBACSubject(t, s, ns, "requester")
	grantCluster(t, s, "it-csr-"+ns, bot.subject(),
		rbacv1.PolicyRule{Verbs: []string{"create", "get", "list", "watch"}, APIGroups: []string{"certificates.k8s.io"}, Resources: []string{"certificatesigningrequests"}},
		rbacv1.PolicyRule{Verbs: []string{"update"}, APIGroups: []string{"certificates.k8s.io"},
			Resources: []string{"certificatesigningrequests/approval", "certificatesigningrequests/status"}})
	botCSRs := bot.cs.CertificatesV1().CertificateSigningRequests()
	adminCSRs := s.Clientset.CertificatesV1().CertificateSigningRequests()

	req, key := newCSRPEM(t, "jane", []string{"devs"})
	name := "it-jane-" + ns
	forged := newCSR(name, req, certificatesv1.UsageClientAuth, certificatesv1.UsageDigitalSignature)
	forged.Spec.Username, forged.Spec.Groups = "system:admin", []string{"system:masters"}
	var csr *certificatesv1.CertificateSigningRequest
	waitFor(t, "the requester's binding", func() error {
		csr, err = botCSRs.Create(ctx, forged, metav1.CreateOptions{})
		return err
	})
	t.Cleanup(func() { _ = adminCSRs.Delete(ctxT(t), name, metav1.DeleteOptions{}) })
	if csr.Spec.Username != bot.user || !slices.Contains(csr.Spec.Groups, "system:serviceaccounts") ||
		slices.Contains(csr.Spec.Groups, "system:masters") || len(csr.Status.Conditions) != 0 || len(csr.ManagedFields) != 1 {
		t.Fatalf("created request: spec %+v status %+v", csr.Spec, csr.Status)
	}
	_, err = botCSRs.UpdateApproval(ctx, name, approve(csr), metav1.UpdateOptions{})
	if st := wantCode(t, err, 403, "approval without approve on the signer"); !strings.Contains(st.Message,
		`user not permitted to approve requests with signerName "kubernetes.io/kube-apiserver-client"`) {
		t.Fatalf("message %q", st.Message)
	}
	selfSigned := csr.DeepCopy()
	selfSigned.Status.Certificate = s.Config.CAData
	_, err = botCSRs.UpdateStatus(ctx, selfSigned, metav1.UpdateOptions{})
	if st := wantCode(t, err, 403, "a certificate without sign on the signer"); !strings.Contains(st.Message,
		`user not permitted to sign requests with signerName "kubernetes.io/kube-apiserver-client"`) {
		t.Fatalf("message %q", st.Message)
	}
	_, err = adminCSRs.UpdateApproval(ctx, name, approve(csr), metav1.UpdateOptions{})
	must(t, err, "approve")
	checkIssued(t, s, waitIssued(t, s, name), key)
	t.Run("approval by signer domain", func(t *testing.T) { testDomainApprover(t, s, ns) })
	t.Run("refused and failed requests", func(t *testing.T) { testBadCSRs(t, s) })
}

// testDomainApprover: approve on signers "kubernetes.io/*" approves a
// kubelet client request, which the kube-apiserver-client-kubelet signer
// issues.
func testDomainApprover(t *testing.T, s *testutil.Server, ns string) {
	approver := newRBACSubject(t, s, ns, "approver")
	grantCluster(t, s, "it-csr-approver-"+ns, approver.subject(),
		rbacv1.PolicyRule{Verbs: []string{"update"}, APIGroups: []string{"certificates.k8s.io"}, Resources: []string{"certificatesigningrequests/approval"}},
		rbacv1.PolicyRule{Verbs: []string{"approve"}, APIGroups: []string{"certificates.k8s.io"}, Resources: []string{"signers"}, ResourceNames: []string{"kubernetes.io/*"}})
	ctx := ctxT(t)
	name := "it-node-" + ns
	req, _ := newCSRPEM(t, "system:node:it-node", []string{"system:nodes"})
	c := newCSR(name, req, certificatesv1.UsageDigitalSignature, certificatesv1.UsageClientAuth)
	c.Spec.SignerName = certificatesv1.KubeAPIServerClientKubeletSignerName
	created, err := s.Clientset.CertificatesV1().CertificateSigningRequests().Create(ctx, c, metav1.CreateOptions{})
	must(t, err, "create the kubelet request")
	t.Cleanup(func() {
		_ = s.Clientset.CertificatesV1().CertificateSigningRequests().Delete(ctxT(t), name, metav1.DeleteOptions{})
	})
	waitFor(t, "the approver's binding", func() error {
		_, err := approver.cs.CertificatesV1().CertificateSigningRequests().UpdateApproval(ctx, name, approve(created), metav1.UpdateOptions{})
		return err
	})
	blk, _ := pem.Decode(waitIssued(t, s, name))
	cert, err := x509.ParseCertificate(blk.Bytes)
	must(t, err, "parse the kubelet certificate")
	if cert.Subject.CommonName != "system:node:it-node" || !slices.Equal(cert.Subject.Organization, []string{"system:nodes"}) {
		t.Fatalf("kubelet certificate subject %v", cert.Subject)
	}
}

// checkIssued: the certificate chains to the cluster CA, carries the
// requested subject and lifetime, and authenticates as jane/devs.
func checkIssued(t *testing.T, s *testutil.Server, certPEM, keyPEM []byte) {
	blk, _ := pem.Decode(certPEM)
	cert, err := x509.ParseCertificate(blk.Bytes)
	must(t, err, "parse certificate")
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(s.Config.CAData)
	if _, err := cert.Verify(x509.VerifyOptions{Roots: pool, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
		t.Fatalf("issued certificate does not chain to the cluster CA: %v", err)
	}
	if life := cert.NotAfter.Sub(time.Now()); cert.Subject.CommonName != "jane" || life > time.Hour || life < 50*time.Minute {
		t.Fatalf("issued certificate: subject %v, valid for %v", cert.Subject, life)
	}
	cfg := anonConfig(s)
	cfg.CertData, cfg.KeyData = certPEM, keyPEM
	cs, err := kubernetes.NewForConfig(cfg)
	must(t, err, "client")
	ssr, err := cs.AuthenticationV1().SelfSubjectReviews().Create(ctxT(t), &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	must(t, err, "whoami with the issued certificate")
	if u := ssr.Status.UserInfo; u.Username != "jane" || !slices.Contains(u.Groups, "devs") {
		t.Fatalf("authenticated as %+v", u)
	}
}

func testBadCSRs(t *testing.T, s *testutil.Server) {
	ctx := ctxT(t)
	csrs := s.Clientset.CertificatesV1().CertificateSigningRequests()
	masters, _ := newCSRPEM(t, "root", []string{"system:masters"})
	_, err := csrs.Create(ctx, newCSR("it-masters", masters, certificatesv1.UsageClientAuth), metav1.CreateOptions{})
	if st := wantCode(t, err, 403, "a system:masters client certificate"); !strings.Contains(st.Message, "system:masters group is not allowed") {
		t.Fatalf("message %q", st.Message)
	}
	_, err = csrs.Create(ctx, newCSR("it-garbage", []byte("not a request"), certificatesv1.UsageClientAuth), metav1.CreateOptions{})
	wantField(t, err, "spec.request")
	good, _ := newCSRPEM(t, "x", nil)
	_, err = csrs.Create(ctx, newCSR("it-nousage", good), metav1.CreateOptions{})
	wantField(t, err, "spec.usages")
	legacy := newCSR("it-legacy", good, certificatesv1.UsageClientAuth)
	legacy.Spec.SignerName = "kubernetes.io/legacy-unknown"
	_, err = csrs.Create(ctx, legacy, metav1.CreateOptions{})
	wantField(t, err, "spec.signerName")
	notNode := newCSR("it-not-node", good, certificatesv1.UsageDigitalSignature, certificatesv1.UsageClientAuth)
	notNode.Spec.SignerName = certificatesv1.KubeAPIServerClientKubeletSignerName
	for name, c := range map[string]*certificatesv1.CertificateSigningRequest{
		"it-server":   newCSR("it-server", good, certificatesv1.UsageServerAuth),
		"it-not-node": notNode,
	} {
		created, err := csrs.Create(ctx, c, metav1.CreateOptions{})
		must(t, err, "create %s", name)
		t.Cleanup(func() { _ = csrs.Delete(ctxT(t), name, metav1.DeleteOptions{}) })
		_, err = csrs.UpdateApproval(ctx, name, approve(created), metav1.UpdateOptions{})
		must(t, err, "approve %s", name)
		waitFailed(t, s, name)
	}
}

// waitFailed waits for the signer to mark name Failed without issuing.
func waitFailed(t *testing.T, s *testutil.Server, name string) {
	t.Helper()
	waitFor(t, name+" to fail", func() error {
		got, err := s.Clientset.CertificatesV1().CertificateSigningRequests().Get(ctxT(t), name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		for _, cd := range got.Status.Conditions {
			if cd.Type == certificatesv1.CertificateFailed && cd.Reason == "SignerValidationFailure" && len(got.Status.Certificate) == 0 {
				return nil
			}
		}
		return fmt.Errorf("conditions %+v", got.Status.Conditions)
	})
}
