package apf

import (
	"bytes"
	"net/http"
	"strings"
	"testing"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apiserver/pkg/apis/flowcontrol/bootstrap"
	"k8s.io/utils/ptr"

	"github.com/orch/orch/server/auth"
)

func bootstrapClassifier(extraFS []*flowcontrolv1.FlowSchema, extraPL []*flowcontrolv1.PriorityLevelConfiguration) *Classifier {
	var fss []*flowcontrolv1.FlowSchema
	var pls []*flowcontrolv1.PriorityLevelConfiguration
	for _, fs := range append(append(append([]*flowcontrolv1.FlowSchema{}, bootstrap.MandatoryFlowSchemas...), bootstrap.SuggestedFlowSchemas...), extraFS...) {
		c := fs.DeepCopy()
		c.UID = types.UID("fs-" + c.Name)
		fss = append(fss, c)
	}
	for _, pl := range append(append(append([]*flowcontrolv1.PriorityLevelConfiguration{}, bootstrap.MandatoryPriorityLevelConfigurations...),
		bootstrap.SuggestedPriorityLevelConfigurations...), extraPL...) {
		c := pl.DeepCopy()
		c.UID = types.UID("pl-" + c.Name)
		pls = append(pls, c)
	}
	c := &Classifier{}
	c.Set(fss, pls)
	return c
}

func userSchema(name, level string, precedence int32, users ...string) *flowcontrolv1.FlowSchema {
	var subjects []flowcontrolv1.Subject
	for _, u := range users {
		subjects = append(subjects, flowcontrolv1.Subject{Kind: flowcontrolv1.SubjectKindUser, User: &flowcontrolv1.UserSubject{Name: u}})
	}
	return &flowcontrolv1.FlowSchema{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: flowcontrolv1.FlowSchemaSpec{MatchingPrecedence: precedence,
			PriorityLevelConfiguration: flowcontrolv1.PriorityLevelConfigurationReference{Name: level},
			Rules: []flowcontrolv1.PolicyRulesWithSubjects{{Subjects: subjects,
				NonResourceRules: []flowcontrolv1.NonResourcePolicyRule{{Verbs: []string{"*"}, NonResourceURLs: []string{"*"}}}}}}}
}

func limited(name string, shares int32) *flowcontrolv1.PriorityLevelConfiguration {
	return &flowcontrolv1.PriorityLevelConfiguration{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: flowcontrolv1.PriorityLevelConfigurationSpec{Type: flowcontrolv1.PriorityLevelEnablementLimited,
			Limited: &flowcontrolv1.LimitedPriorityLevelConfiguration{NominalConcurrencyShares: ptr.To(shares),
				LimitResponse: flowcontrolv1.LimitResponse{Type: flowcontrolv1.LimitResponseTypeReject}}}}
}

// TestClassifyBootstrap: requests land where kube-apiserver's bootstrap
// configuration puts them.
func TestClassifyBootstrap(t *testing.T) {
	c := bootstrapClassifier(nil, nil)
	user := func(name string, groups ...string) *auth.User { return &auth.User{Name: name, Groups: groups} }
	authd := "system:authenticated"
	for _, tc := range []struct {
		name string
		a    auth.Attributes
		want string
	}{
		{"admin", auth.Attributes{User: user("admin", "system:masters", authd), Verb: "list", Resource: "pods", IsResource: true}, "exempt"},
		{"node", auth.Attributes{User: user("system:node:a", "system:nodes", authd), Verb: "list", Resource: "pods",
			IsResource: true}, "system-nodes"},
		{"node status", auth.Attributes{User: user("system:node:a", "system:nodes", authd), Verb: "patch", Resource: "nodes",
			Subresource: "status", Name: "a", IsResource: true}, "system-node-high"},
		{"node lease", auth.Attributes{User: user("system:node:a", "system:nodes", authd), Verb: "update", APIGroup: "coordination.k8s.io",
			Resource: "leases", Namespace: "kube-node-lease", IsResource: true}, "system-node-high"},
		{"probe", auth.Attributes{User: user("x", authd), Verb: "get", Path: "/readyz"}, "probes"},
		{"kube-system sa", auth.Attributes{User: user("system:serviceaccount:kube-system:foo", "system:serviceaccounts",
			"system:serviceaccounts:kube-system", authd), Verb: "get", Resource: "pods", Namespace: "a", IsResource: true}, "kube-system-service-accounts"},
		{"workload sa", auth.Attributes{User: user("system:serviceaccount:app:foo", "system:serviceaccounts", "system:serviceaccounts:app", authd),
			Verb: "get", Resource: "pods", Namespace: "app", IsResource: true}, "service-accounts"},
		{"user", auth.Attributes{User: user("jane", authd), Verb: "get", Path: "/version"}, "global-default"},
		{"unauthenticated-ish", auth.Attributes{User: user("nobody"), Verb: "get", Path: "/version"}, ""},
	} {
		got, ok := c.Classify(&tc.a)
		if (tc.want == "") == ok || got.FlowSchema != tc.want {
			t.Errorf("%s: classified to %q (%v), want %q", tc.name, got.FlowSchema, ok, tc.want)
		}
		if ok && got.FlowSchemaUID != types.UID("fs-"+tc.want) {
			t.Errorf("%s: uid %q", tc.name, got.FlowSchemaUID)
		}
	}
}

// TestClassifyPrecedence: the lowest matchingPrecedence wins, then the
// name; a FlowSchema whose level is missing is skipped.
func TestClassifyPrecedence(t *testing.T) {
	c := bootstrapClassifier([]*flowcontrolv1.FlowSchema{
		userSchema("b-test", "test", 1000, "noxu"),
		userSchema("a-test", "test", 1000, "noxu"),
		userSchema("dangling", "missing", 10, "noxu"),
		userSchema("later", "test", 2000, "noxu", "foo"),
	}, []*flowcontrolv1.PriorityLevelConfiguration{limited("test", 1)})
	a := auth.Attributes{User: &auth.User{Name: "noxu", Groups: []string{"system:authenticated"}}, Verb: "get", Path: "/version"}
	if got, _ := c.Classify(&a); got.FlowSchema != "a-test" || got.PriorityLevel != "test" || got.PriorityLevelUID != "pl-test" {
		t.Errorf("noxu classified to %+v", got)
	}
	a.User.Name = "foo"
	if got, _ := c.Classify(&a); got.FlowSchema != "later" {
		t.Errorf("foo classified to %+v", got)
	}
	h := http.Header{}
	c.ResponseHeaders(&a, h)
	if h.Get("X-Kubernetes-PF-FlowSchema-UID") != "fs-later" || h.Get("X-Kubernetes-PF-PriorityLevel-UID") != "pl-test" {
		t.Errorf("headers %v", h)
	}
}

// TestNominalLimits: the server's 600 seats shared by nominal shares,
// rounded up, as upstream computes apiserver_flowcontrol_nominal_limit_seats.
func TestNominalLimits(t *testing.T) {
	c := &Classifier{}
	c.Set(nil, []*flowcontrolv1.PriorityLevelConfiguration{limited("a", 1), limited("b", 2),
		bootstrap.MandatoryPriorityLevelConfigurationExempt})
	var buf bytes.Buffer
	if err := c.WriteMetrics(&buf); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`apiserver_flowcontrol_nominal_limit_seats{priority_level="a"} 200`,
		`apiserver_flowcontrol_nominal_limit_seats{priority_level="b"} 400`,
		`apiserver_flowcontrol_nominal_limit_seats{priority_level="exempt"} 0`,
		"# TYPE apiserver_flowcontrol_nominal_limit_seats gauge",
	} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("metrics lack %q:\n%s", want, buf.String())
		}
	}
	if _, ok := (&Classifier{}).Classify(&auth.Attributes{}); ok {
		t.Error("an empty classifier classified a request")
	}
}

func TestMatchRules(t *testing.T) {
	sa := flowcontrolv1.Subject{Kind: flowcontrolv1.SubjectKindServiceAccount,
		ServiceAccount: &flowcontrolv1.ServiceAccountSubject{Namespace: "ns", Name: "*"}}
	saUser := &auth.User{Name: "system:serviceaccount:ns:x"}
	for _, tc := range []struct {
		name string
		rule flowcontrolv1.PolicyRulesWithSubjects
		a    auth.Attributes
		want bool
	}{
		{"sa any name", flowcontrolv1.PolicyRulesWithSubjects{Subjects: []flowcontrolv1.Subject{sa},
			NonResourceRules: []flowcontrolv1.NonResourcePolicyRule{{Verbs: []string{"get"}, NonResourceURLs: []string{"/healthz"}}}},
			auth.Attributes{User: saUser, Verb: "get", Path: "/healthz/etcd"}, true},
		{"sa other namespace", flowcontrolv1.PolicyRulesWithSubjects{Subjects: []flowcontrolv1.Subject{sa},
			NonResourceRules: []flowcontrolv1.NonResourcePolicyRule{{Verbs: []string{"*"}, NonResourceURLs: []string{"*"}}}},
			auth.Attributes{User: &auth.User{Name: "system:serviceaccount:nsx:x"}, Verb: "get", Path: "/"}, false},
		{"subresource", flowcontrolv1.PolicyRulesWithSubjects{Subjects: []flowcontrolv1.Subject{sa},
			ResourceRules: []flowcontrolv1.ResourcePolicyRule{{Verbs: []string{"update"}, APIGroups: []string{""},
				Resources: []string{"pods/status"}, Namespaces: []string{"*"}}}},
			auth.Attributes{User: saUser, Verb: "update", Resource: "pods", Subresource: "status", Namespace: "ns", IsResource: true}, true},
		{"cluster scope needed", flowcontrolv1.PolicyRulesWithSubjects{Subjects: []flowcontrolv1.Subject{sa},
			ResourceRules: []flowcontrolv1.ResourcePolicyRule{{Verbs: []string{"*"}, APIGroups: []string{"*"},
				Resources: []string{"*"}, Namespaces: []string{"*"}}}},
			auth.Attributes{User: saUser, Verb: "get", Resource: "nodes", IsResource: true}, false},
		{"resource request, only url rules", flowcontrolv1.PolicyRulesWithSubjects{Subjects: []flowcontrolv1.Subject{sa},
			NonResourceRules: []flowcontrolv1.NonResourcePolicyRule{{Verbs: []string{"*"}, NonResourceURLs: []string{"*"}}}},
			auth.Attributes{User: saUser, Verb: "get", Resource: "pods", Namespace: "ns", IsResource: true}, false},
		{"url wildcard suffix", flowcontrolv1.PolicyRulesWithSubjects{Subjects: []flowcontrolv1.Subject{sa},
			NonResourceRules: []flowcontrolv1.NonResourcePolicyRule{{Verbs: []string{"get"}, NonResourceURLs: []string{"/apis/*"}}}},
			auth.Attributes{User: saUser, Verb: "get", Path: "/apis/apps/v1"}, true},
	} {
		fs := &flowcontrolv1.FlowSchema{Spec: flowcontrolv1.FlowSchemaSpec{Rules: []flowcontrolv1.PolicyRulesWithSubjects{tc.rule}}}
		if got := matches(fs, &tc.a); got != tc.want {
			t.Errorf("%s: matches = %v, want %v", tc.name, got, tc.want)
		}
	}
}
