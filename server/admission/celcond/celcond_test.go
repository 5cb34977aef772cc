package celcond

import (
	"context"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/orch/orch/server/admission"
	"github.com/orch/orch/server/auth"
)

type onlyAlice struct{}

func (onlyAlice) Authorize(_ context.Context, a auth.Attributes) (bool, string, error) {
	return a.User.Name == "alice" && a.Verb == "create" && a.Resource == "configmaps", "", nil
}

func TestMatch(t *testing.T) {
	c := New()
	attrs := func(user, name string) *admission.Attributes {
		return &admission.Attributes{Operation: admission.Create, Kind: corev1.SchemeGroupVersion.WithKind("ConfigMap"),
			Resource: corev1.SchemeGroupVersion.WithResource("configmaps"), Namespace: "ns", Name: name,
			Object: &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns"}}, User: &auth.User{Name: user}}
	}
	fail, ignore := admissionregistrationv1.Fail, admissionregistrationv1.Ignore
	for _, tc := range []struct {
		name, expr, user, obj string
		fp                    *admissionregistrationv1.FailurePolicyType
		matches, err          bool
	}{
		{"true", "object.metadata.name == 'a'", "bob", "a", nil, true, false},
		{"false", "object.metadata.name == 'a'", "bob", "b", nil, false, false},
		{"request", "request.userInfo.username == 'bob' && request.operation == 'CREATE'", "bob", "a", nil, true, false},
		{"authorizer allows", "authorizer.group('').resource('configmaps').namespace('ns').check('create').allowed()", "alice", "a", nil, true, false},
		{"authorizer denies", "authorizer.group('').resource('configmaps').namespace('ns').check('create').allowed()", "bob", "a", nil, false, false},
		{"error, Fail", "object.metadata.labels['x'] == 'y'", "bob", "a", &fail, false, true},
		{"error, Ignore", "object.metadata.labels['x'] == 'y'", "bob", "a", &ignore, false, false},
	} {
		m := c.Matcher([]admissionregistrationv1.MatchCondition{{Name: "c", Expression: tc.expr}}, tc.fp, "validating", "w")
		r := Match(context.Background(), m, attrs(tc.user, tc.obj), onlyAlice{})
		if r.Matches != tc.matches || (r.Error != nil) != tc.err {
			t.Errorf("%s: %+v", tc.name, r)
		}
	}
}

func TestValidate(t *testing.T) {
	errs := Validate([]admissionregistrationv1.MatchCondition{{Name: "a", Expression: "true"}, {Name: "b", Expression: "object.nope("},
		{Name: "c", Expression: "'s'"}}, field.NewPath("webhooks").Index(0).Child("matchConditions"))
	if len(errs) != 2 || errs[0].Field != "webhooks[0].matchConditions[1].expression" || errs[1].Field != "webhooks[0].matchConditions[2].expression" {
		t.Fatalf("errors: %v", errs)
	}
}
