package admissionregistration

import (
	"slices"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
)

func fields(errs field.ErrorList) []string {
	var out []string
	for _, e := range errs {
		out = append(out, e.Field)
	}
	return out
}

func TestWebhookServicePath(t *testing.T) {
	for _, c := range []struct {
		path *string
		want []string
	}{
		{nil, nil}, {ptr.To(""), nil}, {ptr.To("/"), nil}, {ptr.To("/always-deny"), nil},
		{ptr.To("deny"), []string{"webhooks[0].clientConfig.service.path"}},
		{ptr.To("/a//b"), []string{"webhooks[0].clientConfig.service.path"}},
	} {
		cfg := &admissionregistrationv1.ValidatingWebhookConfiguration{Webhooks: []admissionregistrationv1.ValidatingWebhook{{
			Name: "deny.orch.test", ClientConfig: admissionregistrationv1.WebhookClientConfig{
				Service: &admissionregistrationv1.ServiceReference{Namespace: "ns", Name: "svc", Path: c.path}},
			SideEffects: ptr.To(admissionregistrationv1.SideEffectClassNone), AdmissionReviewVersions: []string{"v1"}}}}
		DefaultValidating(cfg)
		if got := fields(ValidateValidating(cfg)); !slices.Equal(got, c.want) {
			t.Errorf("path %v: errors at %v, want %v", ptr.Deref(c.path, "<nil>"), got, c.want)
		}
	}
}

func TestMutatingPolicyValidation(t *testing.T) {
	valid := func() *admissionregistrationv1.MutatingAdmissionPolicy {
		return &admissionregistrationv1.MutatingAdmissionPolicy{ObjectMeta: metav1.ObjectMeta{Name: "p"},
			Spec: admissionregistrationv1.MutatingAdmissionPolicySpec{
				MatchConstraints: &admissionregistrationv1.MatchResources{ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{
					RuleWithOperations: admissionregistrationv1.RuleWithOperations{Operations: []admissionregistrationv1.OperationType{"CREATE"},
						Rule: admissionregistrationv1.Rule{APIGroups: []string{"apps"}, APIVersions: []string{"v1"}, Resources: []string{"deployments"}}}}}},
				Mutations: []admissionregistrationv1.Mutation{{PatchType: admissionregistrationv1.PatchTypeApplyConfiguration,
					ApplyConfiguration: &admissionregistrationv1.ApplyConfiguration{Expression: `Object{spec: Object.spec{replicas: 1}}`}}},
				ReinvocationPolicy: admissionregistrationv1.NeverReinvocationPolicy}}
	}
	for _, c := range []struct {
		name   string
		change func(p *admissionregistrationv1.MutatingAdmissionPolicy)
		want   []string
	}{
		{"valid", func(*admissionregistrationv1.MutatingAdmissionPolicy) {}, nil},
		{"no reinvocationPolicy", func(p *admissionregistrationv1.MutatingAdmissionPolicy) { p.Spec.ReinvocationPolicy = "" },
			[]string{"spec.reinvocationPolicy"}},
		{"DELETE", func(p *admissionregistrationv1.MutatingAdmissionPolicy) {
			p.Spec.MatchConstraints.ResourceRules[0].Operations = []admissionregistrationv1.OperationType{"DELETE"}
		}, []string{"spec.matchConstraints.resourceRules.operations"}},
		{"no mutations", func(p *admissionregistrationv1.MutatingAdmissionPolicy) { p.Spec.Mutations = nil }, []string{"spec.mutations"}},
		{"JSONPatch without jsonPatch", func(p *admissionregistrationv1.MutatingAdmissionPolicy) {
			p.Spec.Mutations[0].PatchType = admissionregistrationv1.PatchTypeJSONPatch
		}, []string{"spec.mutations[0].jsonPatch", "spec.mutations[0].applyConfiguration"}},
		{"does not compile", func(p *admissionregistrationv1.MutatingAdmissionPolicy) {
			p.Spec.Mutations[0].ApplyConfiguration.Expression = "Object{"
		}, []string{"spec.mutations[0].applyConfiguration.expression"}},
		{"not an Object", func(p *admissionregistrationv1.MutatingAdmissionPolicy) {
			p.Spec.Mutations[0].ApplyConfiguration.Expression = "1"
		}, []string{"spec.mutations[0].applyConfiguration.expression"}},
	} {
		p := valid()
		c.change(p)
		defaultMutatingPolicy(&p.Spec)
		if got := fields(ValidateMutatingPolicy(p)); !slices.Equal(got, c.want) {
			t.Errorf("%s: errors at %v, want %v", c.name, got, c.want)
		}
	}
}
