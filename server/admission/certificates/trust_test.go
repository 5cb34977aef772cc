package certificates

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/orch/orch/datastore"
	"github.com/orch/orch/server/admission"
	"github.com/orch/orch/server/auth"
)

// signerRule lets "attester" attest and "signer" sign for ex.com/*, and
// node n2 request-serviceaccounts-podcertificate-signer for ex.com:extra.
func signerRule() auth.Authorizer {
	return auth.NewAuthorizer(nil, func(_ context.Context, a auth.Attributes) (auth.Decision, string, error) {
		switch {
		case a.User.Name == "attester" && a.Verb == "attest" && a.Resource == "signers" && a.Name == "ex.com/*",
			a.User.Name == "signer" && a.Verb == "sign" && a.Resource == "signers" && a.Name == "ex.com/*",
			a.User.Name == "system:node:n2" && a.Verb == "request-serviceaccounts-podcertificate-signer" && a.Resource == "ex.com:extra":
			return auth.Allow, "", nil
		}
		return auth.NoOpinion, "", nil
	})
}

func wantStatus(t *testing.T, what string, err error, code int32, msg string) {
	t.Helper()
	if code == 0 {
		if err != nil {
			t.Errorf("%s: %v", what, err)
		}
		return
	}
	var st apierrors.APIStatus
	if err == nil || !errorsAs(err, &st) || st.Status().Code != code || !strings.Contains(err.Error(), msg) {
		t.Errorf("%s: got %v, want %d %q", what, err, code, msg)
	}
}

func errorsAs(err error, st *apierrors.APIStatus) bool {
	s, ok := err.(apierrors.APIStatus)
	*st = s
	return ok
}

func ctbAttrs(op admission.Operation, user string, obj, old runtime.Object) *admission.Attributes {
	return &admission.Attributes{Operation: op, Resource: certificatesv1.SchemeGroupVersion.WithResource("clustertrustbundles"),
		Object: obj, OldObject: old, User: &auth.User{Name: user}}
}

// TestAttest: a bundle naming a signer needs attest on it (or its
// domain); bundles without a signer and GC-only updates do not.
func TestAttest(t *testing.T) {
	p := NewAttest(signerRule())
	b := &certificatesv1.ClusterTrustBundle{ObjectMeta: metav1.ObjectMeta{Name: "ex.com:s:1"},
		Spec: certificatesv1.ClusterTrustBundleSpec{SignerName: "ex.com/s", TrustBundle: "x"}}
	plain := &certificatesv1.ClusterTrustBundle{ObjectMeta: metav1.ObjectMeta{Name: "p"}}
	gc := b.DeepCopy()
	gc.Finalizers = []string{"example.com/f"}
	changed := b.DeepCopy()
	changed.Spec.TrustBundle = "y"
	ctx := context.Background()
	wantStatus(t, "attester", p.Validate(ctx, ctbAttrs(admission.Create, "attester", b, nil)), 0, "")
	wantStatus(t, "no attest", p.Validate(ctx, ctbAttrs(admission.Create, "eve", b, nil)), 403, `user not permitted to attest for signerName "ex.com/s"`)
	wantStatus(t, "no signer", p.Validate(ctx, ctbAttrs(admission.Create, "eve", plain, nil)), 0, "")
	wantStatus(t, "GC-only update", p.Validate(ctx, ctbAttrs(admission.Update, "eve", gc, b)), 0, "")
	wantStatus(t, "bundle update", p.Validate(ctx, ctbAttrs(admission.Update, "eve", changed, b)), 403, "attest")
}

// TestPCRSigning: changing a request's status needs sign on its signer.
func TestPCRSigning(t *testing.T) {
	p := NewPCRSigning(signerRule())
	old := &certificatesv1.PodCertificateRequest{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "r"},
		Spec: certificatesv1.PodCertificateRequestSpec{SignerName: "ex.com/pods"}}
	issued := old.DeepCopy()
	issued.Status.CertificateChain = "chain"
	relabelled := old.DeepCopy()
	relabelled.Labels = map[string]string{"a": "b"}
	at := func(user string, obj runtime.Object) *admission.Attributes {
		return &admission.Attributes{Operation: admission.Update, Subresource: "status", Namespace: "ns", Name: "r",
			Resource: certificatesv1.SchemeGroupVersion.WithResource("podcertificaterequests"), Object: obj, OldObject: old,
			User: &auth.User{Name: user}}
	}
	ctx := context.Background()
	wantStatus(t, "signer", p.Validate(ctx, at("signer", issued)), 0, "")
	wantStatus(t, "not a signer", p.Validate(ctx, at("eve", issued)), 403, `User "eve" is not permitted to "sign" for signer "ex.com/pods"`)
	wantStatus(t, "status unchanged", p.Validate(ctx, at("eve", relabelled)), 0, "")
}

func put(t *testing.T, st datastore.Store, key string, obj any) {
	t.Helper()
	b, _ := json.Marshal(obj)
	if _, err := st.Create(context.Background(), key, b); err != nil {
		t.Fatal(err)
	}
}

// TestPCRNodeRestriction: a node requests certificates only for pods
// bound to it, with the real UIDs, for signers the pod names (or that it
// is authorized to request); other users are not restricted.
func TestPCRNodeRestriction(t *testing.T) {
	st := datastore.NewMemStore(100)
	for _, n := range []string{"n1", "n2"} {
		put(t, st, "/registry/nodes/"+n, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: n, UID: "uid-" + "node-" + "x"}})
	}
	put(t, st, "/registry/serviceaccounts/ns/sa", &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "sa", UID: "sa-uid"}})
	vol := corev1.Volume{Name: "v", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{
		{PodCertificate: &corev1.PodCertificateProjection{SignerName: "ex.com/pods"}}}}}}
	pod := func(name, node string, ann map[string]string) {
		put(t, st, "/registry/pods/ns/"+name, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID("uid-" + name), Annotations: ann},
			Spec: corev1.PodSpec{NodeName: node, ServiceAccountName: "sa", Volumes: []corev1.Volume{vol}}})
	}
	pod("mine", "n1", nil)
	pod("theirs", "n2", nil)
	pod("mirror", "n1", map[string]string{mirrorPodAnnotation: "x"})
	p := NewPCRNodeRestriction(st, signerRule())
	req := func(mut func(*certificatesv1.PodCertificateRequestSpec)) *certificatesv1.PodCertificateRequest {
		r := &certificatesv1.PodCertificateRequest{Spec: certificatesv1.PodCertificateRequestSpec{SignerName: "ex.com/pods",
			PodName: "mine", PodUID: "uid-mine", ServiceAccountName: "sa", ServiceAccountUID: "sa-uid", NodeName: "n1", NodeUID: "uid-node-x"}}
		mut(&r.Spec)
		return r
	}
	at := func(user string, op admission.Operation, r *certificatesv1.PodCertificateRequest) *admission.Attributes {
		u := &auth.User{Name: user}
		if strings.HasPrefix(user, auth.NodeUserPrefix) {
			u.Groups = []string{auth.GroupNodes}
		}
		return &admission.Attributes{Operation: op, Namespace: "ns", Object: r,
			Resource: certificatesv1.SchemeGroupVersion.WithResource("podcertificaterequests"), User: u}
	}
	same := func(*certificatesv1.PodCertificateRequestSpec) {}
	ctx := context.Background()
	for _, c := range []struct {
		what string
		user string
		op   admission.Operation
		mut  func(*certificatesv1.PodCertificateRequestSpec)
		code int32
		msg  string
	}{
		{"own pod", "system:node:n1", admission.Create, same, 0, ""},
		{"admin, anything", "admin", admission.Create, func(s *certificatesv1.PodCertificateRequestSpec) { s.NodeName = "n9" }, 0, ""},
		{"another node's name", "system:node:n1", admission.Create, func(s *certificatesv1.PodCertificateRequestSpec) { s.NodeName = "n2" }, 403,
			"which is not the requesting node"},
		{"pod on another node", "system:node:n1", admission.Create, func(s *certificatesv1.PodCertificateRequestSpec) {
			s.PodName, s.PodUID = "theirs", "uid-theirs"
		}, 403, "is not running on node"},
		{"mirror pod", "system:node:n1", admission.Create, func(s *certificatesv1.PodCertificateRequestSpec) {
			s.PodName, s.PodUID = "mirror", "uid-mirror"
		}, 403, "is a mirror pod"},
		{"stale pod UID", "system:node:n1", admission.Create, func(s *certificatesv1.PodCertificateRequestSpec) { s.PodUID = "old" }, 500,
			"differs from running pod"},
		{"missing pod", "system:node:n1", admission.Create, func(s *certificatesv1.PodCertificateRequestSpec) { s.PodName = "gone" }, 500,
			"while retrieving pod"},
		{"wrong service account", "system:node:n1", admission.Create, func(s *certificatesv1.PodCertificateRequestSpec) { s.ServiceAccountName = "other" },
			403, "contains serviceAccountName"},
		{"stale SA UID", "system:node:n1", admission.Create, func(s *certificatesv1.PodCertificateRequestSpec) { s.ServiceAccountUID = "old" }, 500,
			"names service account UID"},
		{"signer not mounted", "system:node:n1", admission.Create, func(s *certificatesv1.PodCertificateRequestSpec) { s.SignerName = "ex.com/extra" },
			403, "does not mount a podCertificate projected volume"},
		{"node update", "system:node:n1", admission.Update, same, 403, "unexpected operation"},
	} {
		wantStatus(t, c.what, p.Validate(ctx, at(c.user, c.op, req(c.mut))), c.code, c.msg)
	}
	// n2 may request ex.com/extra for its pod though the pod names only
	// ex.com/pods.
	r := req(func(s *certificatesv1.PodCertificateRequestSpec) {
		s.PodName, s.PodUID, s.NodeName, s.SignerName = "theirs", "uid-theirs", "n2", "ex.com/extra"
	})
	wantStatus(t, "authorized signer", p.Validate(ctx, at("system:node:n2", admission.Create, r)), 0, "")
}
