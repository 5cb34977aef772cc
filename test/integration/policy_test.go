package integration

import (
	"fmt"
	"strings"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	"github.com/orch/orch/test/testutil"
)

func init() {
	register("ValidatingAdmissionPolicy", testValidatingAdmissionPolicy)
}

// testValidatingAdmissionPolicy: a policy with a param (a ConfigMap
// holding the limit), a variable, a matchCondition and a messageExpression
// denies ConfigMaps with too many keys in the bound namespace; a Warn
// binding warns instead; a policy whose CEL does not compile is refused.
func testValidatingAdmissionPolicy(t *testing.T, s *testutil.Server) {
	ctx := ctxT(t)
	ns, warnNS := newNamespace(t, s.Clientset), newNamespace(t, s.Clientset)
	_, err := s.Clientset.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "limits"},
		Data: map[string]string{"maxKeys": "2"}}, metav1.CreateOptions{})
	must(t, err, "param configmap")
	vaps := s.Clientset.AdmissionregistrationV1().ValidatingAdmissionPolicies()
	bindings := s.Clientset.AdmissionregistrationV1().ValidatingAdmissionPolicyBindings()
	name := "it-max-keys-" + ns
	policy := &admissionregistrationv1.ValidatingAdmissionPolicy{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			ParamKind: &admissionregistrationv1.ParamKind{APIVersion: "v1", Kind: "ConfigMap"},
			MatchConstraints: &admissionregistrationv1.MatchResources{ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{
				RuleWithOperations: admissionregistrationv1.RuleWithOperations{Operations: []admissionregistrationv1.OperationType{"CREATE", "UPDATE"},
					Rule: admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"configmaps"}}}}}},
			MatchConditions: []admissionregistrationv1.MatchCondition{{Name: "not-the-limits", Expression: "object.metadata.name != 'limits'"}},
			Variables:       []admissionregistrationv1.Variable{{Name: "keys", Expression: "has(object.data) ? size(object.data) : 0"}},
			Validations: []admissionregistrationv1.Validation{{Expression: "variables.keys <= int(params.data.maxKeys)",
				MessageExpression: "'too many keys: ' + string(variables.keys) + ' > ' + params.data.maxKeys"}},
		}}
	_, err = vaps.Create(ctx, policy, metav1.CreateOptions{})
	must(t, err, "create policy")
	t.Cleanup(func() { _ = vaps.Delete(ctxT(t), name, metav1.DeleteOptions{}) })
	for _, b := range []struct {
		ns     string
		action admissionregistrationv1.ValidationAction
	}{{ns, admissionregistrationv1.Deny}, {warnNS, admissionregistrationv1.Warn}} {
		bn := name + "-" + strings.ToLower(string(b.action))
		_, err = bindings.Create(ctx, &admissionregistrationv1.ValidatingAdmissionPolicyBinding{ObjectMeta: metav1.ObjectMeta{Name: bn},
			Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{PolicyName: name,
				ParamRef: &admissionregistrationv1.ParamRef{Name: "limits", Namespace: ns,
					ParameterNotFoundAction: ptr.To(admissionregistrationv1.DenyAction)},
				MatchResources:    &admissionregistrationv1.MatchResources{NamespaceSelector: nsSelector(b.ns)},
				ValidationActions: []admissionregistrationv1.ValidationAction{b.action}}}, metav1.CreateOptions{})
		must(t, err, "create binding %s", bn)
		t.Cleanup(func() { _ = bindings.Delete(ctxT(t), bn, metav1.DeleteOptions{}) })
	}
	three := func(n string) *corev1.ConfigMap {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: n}, Data: map[string]string{"a": "1", "b": "2", "c": "3"}}
	}
	cms := s.Clientset.CoreV1().ConfigMaps(ns)
	waitFor(t, "the policy to deny", func() error {
		_, err := cms.Create(ctx, three("big"), metav1.CreateOptions{})
		if err == nil {
			_ = cms.Delete(ctx, "big", metav1.DeleteOptions{})
			return fmt.Errorf("created")
		}
		if st := statusOf(err); st == nil || st.Code != 422 || !strings.Contains(st.Message,
			fmt.Sprintf("ValidatingAdmissionPolicy '%s' with binding '%s-deny' denied request: too many keys: 3 > 2", name, name)) {
			t.Fatalf("denial: %v", err)
		}
		return nil
	})
	_, err = cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "small"}, Data: map[string]string{"a": "1"}}, metav1.CreateOptions{})
	must(t, err, "a configmap within the limit")
	testPolicyWarns(t, s, warnNS, three)
	bad := policy.DeepCopy()
	bad.Name = name + "-bad"
	bad.Spec.Validations[0].Expression = "variables.keys <= "
	_, err = vaps.Create(ctx, bad, metav1.CreateOptions{})
	wantField(t, err, "spec.validations[0].expression")
}

// testPolicyWarns: under a Warn binding the create succeeds with the
// policy's message as a Warning header.
func testPolicyWarns(t *testing.T, s *testutil.Server, ns string, three func(string) *corev1.ConfigMap) {
	ctx := ctxT(t)
	h := &warnings{}
	cfg := rest.CopyConfig(s.Config)
	cfg.WarningHandler = h
	cs, err := kubernetes.NewForConfig(cfg)
	must(t, err, "client")
	waitFor(t, "the policy to warn", func() error {
		h.got = nil
		c := three("")
		c.GenerateName = "warn-"
		cm, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, c, metav1.CreateOptions{})
		if err != nil {
			return err
		}
		_ = cs.CoreV1().ConfigMaps(ns).Delete(ctx, cm.Name, metav1.DeleteOptions{})
		for _, w := range h.got {
			if strings.Contains(w, "Validation failed for ValidatingAdmissionPolicy") && strings.Contains(w, "too many keys: 3 > 2") {
				return nil
			}
		}
		return fmt.Errorf("warnings %q", h.got)
	})
}

type warnings struct{ got []string }

func (w *warnings) HandleWarningHeader(code int, _ string, text string) {
	if code == 299 {
		w.got = append(w.got, text)
	}
}
