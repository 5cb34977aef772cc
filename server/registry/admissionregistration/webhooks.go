package admissionregistration

import (
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	"github.com/orch/orch/server/registry"
)

// Group is admissionregistration.k8s.io for server/registry/all.
func Group() registry.Group {
	return registry.Group{Name: admissionregistrationv1.GroupName, Resources: resources, AddToScheme: admissionregistrationv1.AddToScheme}
}

func resources(registry.Config) []*registry.Resource {
	gv := admissionregistrationv1.SchemeGroupVersion
	webhooksCol := []metav1.TableColumnDefinition{
		registry.Col("Webhooks", "integer", 0, "Webhooks indicates the number of webhooks in the configuration."),
		registry.AgeColumn(),
	}
	mutating := func(o runtime.Object) *admissionregistrationv1.MutatingWebhookConfiguration {
		return o.(*admissionregistrationv1.MutatingWebhookConfiguration)
	}
	validating := func(o runtime.Object) *admissionregistrationv1.ValidatingWebhookConfiguration {
		return o.(*admissionregistrationv1.ValidatingWebhookConfiguration)
	}
	defs := []registry.Def{
		{GroupVersion: gv, Resource: "mutatingwebhookconfigurations", Kind: "MutatingWebhookConfiguration",
			New:     registry.NewObjects[admissionregistrationv1.MutatingWebhookConfiguration](),
			NewList: registry.NewObjects[admissionregistrationv1.MutatingWebhookConfigurationList](),
			Hooks: registry.Hooks{
				Generation:     true,
				Defaults:       func(o runtime.Object) { DefaultMutating(mutating(o)) },
				Validate:       func(o runtime.Object) field.ErrorList { return ValidateMutating(mutating(o)) },
				ValidateUpdate: func(o, _ runtime.Object) field.ErrorList { return ValidateMutating(mutating(o)) },
				Columns:        webhooksCol,
				Row: func(o runtime.Object) []interface{} {
					return []interface{}{int64(len(mutating(o).Webhooks)), registry.Age(o)}
				},
			}},
		{GroupVersion: gv, Resource: "validatingwebhookconfigurations", Kind: "ValidatingWebhookConfiguration",
			New:     registry.NewObjects[admissionregistrationv1.ValidatingWebhookConfiguration](),
			NewList: registry.NewObjects[admissionregistrationv1.ValidatingWebhookConfigurationList](),
			Hooks: registry.Hooks{
				Generation:     true,
				Defaults:       func(o runtime.Object) { DefaultValidating(validating(o)) },
				Validate:       func(o runtime.Object) field.ErrorList { return ValidateValidating(validating(o)) },
				ValidateUpdate: func(o, _ runtime.Object) field.ErrorList { return ValidateValidating(validating(o)) },
				Columns:        webhooksCol,
				Row: func(o runtime.Object) []interface{} {
					return []interface{}{int64(len(validating(o).Webhooks)), registry.Age(o)}
				},
			}},
	}
	defs = append(defs, policyDefs(gv)...)
	return registry.BuildAll(append(defs, mutatingPolicyDefs(gv)...)...)
}

// common are the fields mutating and validating webhooks share.
type common struct {
	name                    string
	clientConfig            *admissionregistrationv1.WebhookClientConfig
	rules                   []admissionregistrationv1.RuleWithOperations
	failurePolicy           **admissionregistrationv1.FailurePolicyType
	matchPolicy             **admissionregistrationv1.MatchPolicyType
	namespaceSelector       **metav1.LabelSelector
	objectSelector          **metav1.LabelSelector
	sideEffects             *admissionregistrationv1.SideEffectClass
	timeoutSeconds          **int32
	admissionReviewVersions []string
	matchConditions         []admissionregistrationv1.MatchCondition
}

func mutatingCommon(w *admissionregistrationv1.MutatingWebhook) common {
	return common{w.Name, &w.ClientConfig, w.Rules, &w.FailurePolicy, &w.MatchPolicy, &w.NamespaceSelector,
		&w.ObjectSelector, w.SideEffects, &w.TimeoutSeconds, w.AdmissionReviewVersions, w.MatchConditions}
}

func validatingCommon(w *admissionregistrationv1.ValidatingWebhook) common {
	return common{w.Name, &w.ClientConfig, w.Rules, &w.FailurePolicy, &w.MatchPolicy, &w.NamespaceSelector,
		&w.ObjectSelector, w.SideEffects, &w.TimeoutSeconds, w.AdmissionReviewVersions, w.MatchConditions}
}

// DefaultMutating applies upstream's v1 defaults.
func DefaultMutating(c *admissionregistrationv1.MutatingWebhookConfiguration) {
	for i := range c.Webhooks {
		w := &c.Webhooks[i]
		defaultCommon(mutatingCommon(w))
		if w.ReinvocationPolicy == nil {
			w.ReinvocationPolicy = ptr.To(admissionregistrationv1.NeverReinvocationPolicy)
		}
	}
}

// DefaultValidating applies upstream's v1 defaults.
func DefaultValidating(c *admissionregistrationv1.ValidatingWebhookConfiguration) {
	for i := range c.Webhooks {
		defaultCommon(validatingCommon(&c.Webhooks[i]))
	}
}

func defaultCommon(w common) {
	if *w.failurePolicy == nil {
		*w.failurePolicy = ptr.To(admissionregistrationv1.Fail)
	}
	if *w.matchPolicy == nil {
		*w.matchPolicy = ptr.To(admissionregistrationv1.Equivalent)
	}
	if *w.namespaceSelector == nil {
		*w.namespaceSelector = &metav1.LabelSelector{}
	}
	if *w.objectSelector == nil {
		*w.objectSelector = &metav1.LabelSelector{}
	}
	if *w.timeoutSeconds == nil {
		*w.timeoutSeconds = ptr.To(int32(10))
	}
	if s := w.clientConfig.Service; s != nil && s.Port == nil {
		s.Port = ptr.To(int32(443))
	}
	for i := range w.rules {
		if w.rules[i].Scope == nil {
			w.rules[i].Scope = ptr.To(admissionregistrationv1.AllScopes)
		}
	}
}
