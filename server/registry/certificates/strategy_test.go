package certificates

import (
	"context"
	"slices"
	"testing"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/orch/orch/server/auth"
	"github.com/orch/orch/server/registry"
)

func csrResource(t *testing.T) *registry.Resource {
	t.Helper()
	for _, r := range resources(registry.Config{}) {
		if r.Resource == "certificatesigningrequests" {
			return r
		}
	}
	t.Fatal("no certificatesigningrequests resource")
	return nil
}

func condTypes(c *certificatesv1.CertificateSigningRequest) []certificatesv1.RequestConditionType {
	var out []certificatesv1.RequestConditionType
	for _, cd := range c.Status.Conditions {
		out = append(out, cd.Type)
	}
	return out
}

// TestPrepareCreate: the requester's identity replaces whatever the body
// claimed, and nobody creates an approved or issued request.
func TestPrepareCreate(t *testing.T) {
	st := csrResource(t).Strategy
	for _, c := range []struct {
		name  string
		user  *auth.User
		wantU string
		wantG []string
		wantE map[string]certificatesv1.ExtraValue
	}{
		{"user", &auth.User{Name: "jane", UID: "u1", Groups: []string{"devs", "system:authenticated"},
			Extra: map[string][]string{"scopes": {"a", "b"}}}, "jane", []string{"devs", "system:authenticated"},
			map[string]certificatesv1.ExtraValue{"scopes": {"a", "b"}}},
		{"no extra", &auth.User{Name: "bob"}, "bob", nil, nil},
		{"no user", nil, "", nil, nil},
	} {
		ctx := context.Background()
		if c.user != nil {
			ctx = auth.WithUser(ctx, c.user)
		}
		csr := validCSR(t)
		csr.Spec.Username, csr.Spec.UID, csr.Spec.Groups = "system:admin", "forged", []string{"system:masters"}
		csr.Spec.Extra = map[string]certificatesv1.ExtraValue{"x": {"y"}}
		csr.Status = certificatesv1.CertificateSigningRequestStatus{Conditions: conds("Approved"), Certificate: certificate(t)}
		st.PrepareForCreate(ctx, csr)
		wantUID := ""
		if c.user != nil {
			wantUID = c.user.UID
		}
		if csr.Spec.Username != c.wantU || csr.Spec.UID != wantUID || !slices.Equal(csr.Spec.Groups, c.wantG) ||
			len(csr.Spec.Extra) != len(c.wantE) || (c.wantE != nil && !slices.Equal(csr.Spec.Extra["scopes"], c.wantE["scopes"])) {
			t.Errorf("%s: spec %+v", c.name, csr.Spec)
		}
		if len(csr.Status.Conditions) != 0 || len(csr.Status.Certificate) != 0 {
			t.Errorf("%s: status kept: %+v", c.name, csr.Status)
		}
	}
}

// TestUpdateRules: the main resource keeps spec and status, the status
// subresource keeps spec and the approval conditions, the approval
// subresource keeps spec and certificate and takes every condition given
// (upstream's csrApprovalStrategy; the conformance spec patches in a
// condition of its own type).
func TestUpdateRules(t *testing.T) {
	res := csrResource(t)
	ctx := context.Background()
	certPEM := certificate(t)
	old := validCSR(t)
	old.ResourceVersion = "5"
	old.Status.Conditions = conds("Approved")
	old.Status.Conditions[0].LastTransitionTime = metav1.NewTime(time.Unix(1000, 0))
	edit := func() *certificatesv1.CertificateSigningRequest {
		c := old.DeepCopy()
		c.Spec.SignerName, c.Spec.Usages = "example.com/other", []certificatesv1.KeyUsage{"server auth"}
		c.Status.Conditions = append(conds("Denied"), certificatesv1.CertificateSigningRequestCondition{Type: "Failed", Status: "True", Reason: "R"})
		c.Status.Certificate = certPEM
		return c
	}

	main := edit()
	res.Strategy.PrepareForUpdate(ctx, main, old)
	if main.Spec.SignerName != "example.com/signer" || !slices.Equal(condTypes(main), condTypes(old)) || len(main.Status.Certificate) != 0 {
		t.Errorf("main update: spec %+v status %+v", main.Spec, main.Status)
	}

	status := edit()
	res.Strategy.PrepareForStatusUpdate(ctx, status, old)
	if status.Spec.SignerName != "example.com/signer" || !slices.Equal(condTypes(status), []certificatesv1.RequestConditionType{"Approved", "Failed"}) ||
		string(status.Status.Certificate) != string(certPEM) {
		t.Fatalf("status update: spec %+v status %+v", status.Spec, status.Status)
	}
	if errs := res.Strategy.ValidateStatusUpdate(ctx, status, old); len(errs) > 0 {
		t.Errorf("status update: %v", errs)
	}
	if f := status.Status.Conditions[1]; f.LastUpdateTime.IsZero() || f.LastTransitionTime.IsZero() ||
		!status.Status.Conditions[0].LastTransitionTime.Equal(&old.Status.Conditions[0].LastTransitionTime) {
		t.Errorf("status update timestamps: %+v", status.Status.Conditions)
	}

	appr := edit()
	sub := res.Subresources["approval"]
	sub.PrepareForUpdate(ctx, appr, old)
	if appr.Spec.SignerName != "example.com/signer" || !slices.Equal(condTypes(appr), []certificatesv1.RequestConditionType{"Denied", "Failed"}) ||
		len(appr.Status.Certificate) != 0 {
		t.Errorf("approval update: spec %+v status %+v", appr.Spec, appr.Status)
	}
	if errs := sub.ValidateUpdate(ctx, appr, old); len(errs) == 0 {
		t.Error("approval update replacing Approved with Denied was allowed")
	}
}

// TestApprovalValidation: approving a pending request is fine, labels are
// checked, and an approval cannot be taken back.
func TestApprovalValidation(t *testing.T) {
	sub := csrResource(t).Subresources["approval"]
	ctx := context.Background()
	old := validCSR(t)
	old.Name, old.ResourceVersion = "node-csr-AbC_d", "5"
	for _, c := range []struct {
		name string
		mod  func(*certificatesv1.CertificateSigningRequest)
		ok   bool
	}{
		{"approve", func(c *certificatesv1.CertificateSigningRequest) { c.Status.Conditions = conds("Approved") }, true},
		{"deny", func(c *certificatesv1.CertificateSigningRequest) { c.Status.Conditions = conds("Denied") }, true},
		{"both", func(c *certificatesv1.CertificateSigningRequest) { c.Status.Conditions = conds("Approved", "Denied") }, false},
		{"bad label", func(c *certificatesv1.CertificateSigningRequest) { c.Labels = map[string]string{"a": "b c"} }, false},
	} {
		c2 := old.DeepCopy()
		c.mod(c2)
		sub.PrepareForUpdate(ctx, c2, old)
		if errs := sub.ValidateUpdate(ctx, c2, old); (len(errs) == 0) != c.ok {
			t.Errorf("%s: %v", c.name, errs)
		}
	}
}

func TestNamesAndFields(t *testing.T) {
	st := csrResource(t).Strategy
	csr := validCSR(t)
	csr.Name = "node-csr-Xy_9-Q"
	if errs := st.Validate(context.Background(), csr); len(errs) > 0 {
		t.Errorf("a kubelet-style name: %v", errs)
	}
	if got := st.Fields(csr)["spec.signerName"]; got != "example.com/signer" {
		t.Errorf("spec.signerName field %q", got)
	}
}

func TestRow(t *testing.T) {
	for _, c := range []struct {
		name      string
		conds     []certificatesv1.CertificateSigningRequestCondition
		cert      bool
		exp       *int32
		cond, dur string
	}{
		{"pending", nil, false, nil, "Pending", "<none>"},
		{"approved", conds("Approved"), false, ptr.To(int32(3600)), "Approved", "60m"},
		{"issued", conds("Approved"), true, ptr.To(int32(86400)), "Approved,Issued", "24h"},
		{"failed", conds("Approved", "Failed"), false, nil, "Approved,Failed", "<none>"},
		{"denied", conds("Denied"), false, nil, "Denied", "<none>"},
		{"false condition", []certificatesv1.CertificateSigningRequestCondition{{Type: "X", Status: "False"}}, false, nil, "Pending", "<none>"},
	} {
		csr := validCSR(t)
		csr.Spec.Username, csr.Spec.ExpirationSeconds = "jane", c.exp
		csr.Status.Conditions = c.conds
		if c.cert {
			csr.Status.Certificate = []byte("x")
		}
		cells := row(csr)
		if cells[1] != "example.com/signer" || cells[2] != "jane" || cells[3] != c.dur || cells[4] != c.cond {
			t.Errorf("%s: row %v", c.name, cells)
		}
	}
}
