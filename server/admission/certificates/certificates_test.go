package certificates

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"testing"

	certificatesv1 "k8s.io/api/certificates/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/orch/orch/server/admission"
	"github.com/orch/orch/server/auth"
	"github.com/orch/orch/server/auth/rbac"
)

// authorizer: alice may approve and sign for example.com/a, bob for any
// signer of example.com, carol only create requests.
func authorizer() auth.Authorizer {
	signers := func(verbs []string, names ...string) rbacv1.PolicyRule {
		return rbacv1.PolicyRule{Verbs: verbs, APIGroups: []string{certificatesv1.GroupName}, Resources: []string{"signers"}, ResourceNames: names}
	}
	role := func(name string, rules ...rbacv1.PolicyRule) *rbacv1.ClusterRole {
		return &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name}, Rules: rules}
	}
	bind := func(role, user string) *rbacv1.ClusterRoleBinding {
		return &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: user},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role},
			Subjects: []rbacv1.Subject{{Kind: "User", APIGroup: rbacv1.GroupName, Name: user}}}
	}
	both := []string{"approve", "sign"}
	res := &rbac.Resolver{L: &rbac.Static{
		ClusterRoles: []*rbacv1.ClusterRole{
			role("a", signers(both, "example.com/a")),
			role("any", signers(both, "example.com/*")),
			role("create", rbacv1.PolicyRule{Verbs: []string{"create", "update"}, APIGroups: []string{certificatesv1.GroupName},
				Resources: []string{"certificatesigningrequests", "certificatesigningrequests/approval", "certificatesigningrequests/status"}}),
		},
		ClusterRoleBindings: []*rbacv1.ClusterRoleBinding{bind("a", "alice"), bind("any", "bob"), bind("create", "carol")},
	}}
	return auth.NewAuthorizer(nil, rbac.Rule(res))
}

func csr(signer, cert string) *certificatesv1.CertificateSigningRequest {
	return &certificatesv1.CertificateSigningRequest{ObjectMeta: metav1.ObjectMeta{Name: "r"},
		Spec:   certificatesv1.CertificateSigningRequestSpec{SignerName: signer},
		Status: certificatesv1.CertificateSigningRequestStatus{Certificate: []byte(cert)}}
}

func attrs(user, sub string, obj, old runtime.Object) *admission.Attributes {
	return &admission.Attributes{Operation: admission.Update, Subresource: sub, Name: "r",
		Resource: certificatesv1.SchemeGroupVersion.WithResource("certificatesigningrequests"),
		Object:   obj, OldObject: old, User: &auth.User{Name: user}}
}

func TestApprovalAndSigning(t *testing.T) {
	authz := authorizer()
	approval, signing := NewApproval(authz), NewSigning(authz)
	for _, c := range []struct {
		name     string
		plugin   admission.Validator
		user     string
		sub      string
		obj, old *certificatesv1.CertificateSigningRequest
		allowed  bool
	}{
		{"approve own signer", approval, "alice", "approval", csr("example.com/a", ""), csr("example.com/a", ""), true},
		{"approve other signer", approval, "alice", "approval", csr("example.com/b", ""), csr("example.com/b", ""), false},
		{"approve by wildcard", approval, "bob", "approval", csr("example.com/b", ""), csr("example.com/b", ""), true},
		{"wildcard is per domain", approval, "bob", "approval", csr("example.org/b", ""), csr("example.org/b", ""), false},
		{"approve without rights", approval, "carol", "approval", csr("example.com/a", ""), csr("example.com/a", ""), false},
		{"the stored signer counts", approval, "alice", "approval", csr("example.com/a", ""), csr("example.com/b", ""), false},
		{"approval ignores status", approval, "carol", "status", csr("example.com/a", ""), csr("example.com/a", ""), true},
		{"sign own signer", signing, "alice", "status", csr("example.com/a", "c"), csr("example.com/a", ""), true},
		{"sign without rights", signing, "carol", "status", csr("example.com/a", "c"), csr("example.com/a", ""), false},
		{"status without a certificate", signing, "carol", "status", csr("example.com/a", ""), csr("example.com/a", ""), true},
		{"sign the stored signer", signing, "alice", "status", csr("example.com/a", "c"), csr("example.com/b", ""), false},
		{"signing ignores approval", signing, "carol", "approval", csr("example.com/a", "c"), csr("example.com/a", ""), true},
	} {
		err := c.plugin.Validate(context.Background(), attrs(c.user, c.sub, c.obj, c.old))
		if c.allowed != (err == nil) || (err != nil && !apierrors.IsForbidden(err)) {
			t.Errorf("%s: %v", c.name, err)
		}
	}
}

func request(t *testing.T, orgs ...string) []byte {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{Subject: pkix.Name{CommonName: "x", Organization: orgs}}, key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der})
}

func TestSubjectRestriction(t *testing.T) {
	for _, c := range []struct {
		name, signer string
		req          []byte
		allowed      bool
	}{
		{"client", certificatesv1.KubeAPIServerClientSignerName, request(t, "devs"), true},
		{"masters", certificatesv1.KubeAPIServerClientSignerName, request(t, "devs", "system:masters"), false},
		{"masters elsewhere", "example.com/a", request(t, "system:masters"), true},
		{"unparsable", certificatesv1.KubeAPIServerClientSignerName, []byte("x"), false},
	} {
		obj := csr(c.signer, "")
		obj.Spec.Request = c.req
		a := attrs("carol", "", obj, nil)
		a.Operation = admission.Create
		err := SubjectRestriction{}.Validate(context.Background(), a)
		if c.allowed != (err == nil) || (err != nil && !apierrors.IsForbidden(err)) {
			t.Errorf("%s: %v", c.name, err)
		}
	}
}
