package webhook

import (
	"net/http"
	"strings"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"

	"github.com/orch/orch/server/admission"
)

func TestRuleMatches(t *testing.T) {
	rule := func(res string, scope admissionregistrationv1.ScopeType, ops ...admissionregistrationv1.OperationType) admissionregistrationv1.RuleWithOperations {
		return admissionregistrationv1.RuleWithOperations{Operations: ops, Rule: admissionregistrationv1.Rule{
			APIGroups: []string{"*"}, APIVersions: []string{"*"}, Resources: []string{res}, Scope: &scope}}
	}
	pod := &admission.Attributes{Operation: admission.Create, Resource: schema.GroupVersionResource{Version: "v1", Resource: "pods"}, Namespace: "ns"}
	status := &admission.Attributes{Operation: admission.Update, Resource: schema.GroupVersionResource{Version: "v1", Resource: "pods"}, Subresource: "status", Namespace: "ns"}
	node := &admission.Attributes{Operation: admission.Create, Resource: schema.GroupVersionResource{Version: "v1", Resource: "nodes"}}
	tests := []struct {
		name string
		r    admissionregistrationv1.RuleWithOperations
		a    *admission.Attributes
		want bool
	}{
		{"exact", rule("pods", "*", "CREATE"), pod, true},
		{"other op", rule("pods", "*", "DELETE"), pod, false},
		{"star resource excludes subresources", rule("*", "*", "*"), status, false},
		{"star star", rule("*/*", "*", "*"), status, true},
		{"star star covers the resource itself", rule("*/*", "*", "*"), pod, true},
		{"pods/* covers pods", rule("pods/*", "*", "*"), pod, true},
		{"pods/status is not pods", rule("pods/status", "*", "*"), pod, false},
		{"named subresource", rule("pods/status", "*", "UPDATE"), status, true},
		{"*/status", rule("*/status", "*", "UPDATE"), status, true},
		{"namespaced scope", rule("*", "Namespaced", "*"), node, false},
		{"cluster scope", rule("*", "Cluster", "*"), node, true},
		{"cluster scope skips pods", rule("*", "Cluster", "*"), pod, false},
	}
	for _, tt := range tests {
		if got := ruleMatches(tt.r, tt.a); got != tt.want {
			t.Errorf("%s: %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestSelectors(t *testing.T) {
	src := &Static{Namespaces: map[string]map[string]string{"prod": {"env": "prod"}, "dev": {"env": "dev"}}}
	sel := &metav1.LabelSelector{MatchLabels: map[string]string{"env": "prod"}}
	a := func(ns string, labels map[string]string) *admission.Attributes {
		return &admission.Attributes{Namespace: ns, Resource: schema.GroupVersionResource{Version: "v1", Resource: "configmaps"},
			Object: &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Labels: labels}}}
	}
	if ok, _ := selectorsMatch(sel, nil, a("prod", nil), src); !ok {
		t.Error("namespace selector missed prod")
	}
	if ok, _ := selectorsMatch(sel, nil, a("dev", nil), src); ok {
		t.Error("namespace selector matched dev")
	}
	if ok, _ := selectorsMatch(nil, sel, a("dev", map[string]string{"env": "prod"}), src); !ok {
		t.Error("object selector missed a labelled object")
	}
}

func TestDeniedAndDryRun(t *testing.T) {
	err := denied("x.example.com", &metav1.Status{Code: 200, Message: "nope"})
	st := err.(apierrors.APIStatus).Status()
	if st.Code != http.StatusBadRequest || st.Message != `admission webhook "x.example.com" denied the request: nope` {
		t.Fatalf("denied: %+v", st)
	}
	if st := denied("x", nil).(apierrors.APIStatus).Status(); !strings.HasSuffix(st.Message, "without explanation") {
		t.Fatalf("no status: %q", st.Message)
	}
	h := hook{name: "x", sideEffects: ptr.To(admissionregistrationv1.SideEffectClassSome)}
	if err := dryRunAllowed(h, &admission.Attributes{DryRun: true}); !apierrors.IsBadRequest(err) {
		t.Fatalf("dry run with side effects: %v", err)
	}
}

func TestApplyPatch(t *testing.T) {
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "a"}}
	raw, _ := encode(cm, "v1", "ConfigMap")
	changed, err := applyPatch(cm, raw, []byte(`[{"op":"add","path":"/data","value":{"k":"v"}}]`))
	if err != nil || !changed {
		t.Fatal(changed, err)
	}
	if cm.Data["k"] != "v" || cm.Name != "a" {
		t.Fatalf("patched %+v", cm)
	}
	raw, _ = encode(cm, "v1", "ConfigMap")
	if changed, err := applyPatch(cm, raw, []byte(`[{"op":"replace","path":"/data/k","value":"v"}]`)); err != nil || changed {
		t.Fatalf("a patch that changes nothing: %v %v", changed, err)
	}
}
