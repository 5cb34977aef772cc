package integration

import (
	"fmt"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apiextclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/utils/ptr"

	"github.com/orch/orch/test/testutil"
)

func init() {
	register("MutatingAdmissionPolicy", testMutatingAdmissionPolicy)
}

// testMutatingAdmissionPolicy: two IfNeeded policies bound to one
// namespace, one an ApplyConfiguration and one a JSONPatch, each recording
// whether it saw the other's label. Whichever runs first cannot see the
// other's label, so both see it only when the first is reinvoked after the
// second changed the object. Policies that do not compile, or that match
// DELETE, are refused.
func testMutatingAdmissionPolicy(t *testing.T, s *testutil.Server) {
	ctx := ctxT(t)
	ns := newNamespace(t, s.Clientset)
	apply := admissionregistrationv1.Mutation{PatchType: admissionregistrationv1.PatchTypeApplyConfiguration,
		ApplyConfiguration: &admissionregistrationv1.ApplyConfiguration{Expression: `Object{metadata: Object.metadata{labels: {
			"first": "x", "saw-second": ("second" in object.metadata.labels) ? "yes" : "no"}}}`}}
	jsonPatch := admissionregistrationv1.Mutation{PatchType: admissionregistrationv1.PatchTypeJSONPatch,
		JSONPatch: &admissionregistrationv1.JSONPatch{Expression: `[
			JSONPatch{op: "add", path: "/metadata/labels/second", value: "x"},
			JSONPatch{op: "add", path: "/metadata/labels/saw-first", value: ("first" in object.metadata.labels) ? "yes" : "no"}]`}}
	for i, m := range []admissionregistrationv1.Mutation{apply, jsonPatch} {
		createMutatingPolicy(t, s, mutatingPolicy(fmt.Sprintf("it-map-%d-%s", i, ns), m), ns)
	}
	cms := s.Clientset.CoreV1().ConfigMaps(ns)
	waitFor(t, "the policies to mutate", func() error {
		c := cm(ns, "", nil)
		c.GenerateName, c.Labels = "m-", map[string]string{"app": "x"}
		got, err := cms.Create(ctx, c, metav1.CreateOptions{})
		if err != nil {
			return err
		}
		_ = cms.Delete(ctx, got.Name, metav1.DeleteOptions{})
		if l := got.Labels; l["saw-first"] != "yes" || l["saw-second"] != "yes" || l["app"] != "x" {
			return fmt.Errorf("labels %v", l)
		}
		return nil
	})
	maps := s.Clientset.AdmissionregistrationV1().MutatingAdmissionPolicies()
	bad := mutatingPolicy("it-map-bad-"+ns, apply)
	bad.Spec.Mutations[0].ApplyConfiguration = &admissionregistrationv1.ApplyConfiguration{Expression: "Object{spec: "}
	_, err := maps.Create(ctx, bad, metav1.CreateOptions{})
	wantField(t, err, "spec.mutations[0].applyConfiguration.expression")
	bad = mutatingPolicy("it-map-delete-"+ns, apply)
	bad.Spec.MatchConstraints.ResourceRules[0].Operations = []admissionregistrationv1.OperationType{"DELETE"}
	_, err = maps.Create(ctx, bad, metav1.CreateOptions{})
	wantField(t, err, "spec.matchConstraints.resourceRules.operations")
}

func mutatingPolicy(name string, m admissionregistrationv1.Mutation) *admissionregistrationv1.MutatingAdmissionPolicy {
	return &admissionregistrationv1.MutatingAdmissionPolicy{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: admissionregistrationv1.MutatingAdmissionPolicySpec{
			MatchConstraints: &admissionregistrationv1.MatchResources{ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{
				RuleWithOperations: admissionregistrationv1.RuleWithOperations{Operations: []admissionregistrationv1.OperationType{"CREATE"},
					Rule: admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"configmaps"}}}}}},
			Mutations:          []admissionregistrationv1.Mutation{m},
			ReinvocationPolicy: admissionregistrationv1.IfNeededReinvocationPolicy,
		}}
}

// createMutatingPolicy creates p and a binding of it to ns.
func createMutatingPolicy(t *testing.T, s *testutil.Server, p *admissionregistrationv1.MutatingAdmissionPolicy, ns string) {
	ctx := ctxT(t)
	maps := s.Clientset.AdmissionregistrationV1().MutatingAdmissionPolicies()
	bindings := s.Clientset.AdmissionregistrationV1().MutatingAdmissionPolicyBindings()
	_, err := maps.Create(ctx, p, metav1.CreateOptions{})
	must(t, err, "create policy %s", p.Name)
	t.Cleanup(func() { _ = maps.Delete(ctxT(t), p.Name, metav1.DeleteOptions{}) })
	_, err = bindings.Create(ctx, &admissionregistrationv1.MutatingAdmissionPolicyBinding{ObjectMeta: metav1.ObjectMeta{Name: p.Name},
		Spec: admissionregistrationv1.MutatingAdmissionPolicyBindingSpec{PolicyName: p.Name,
			MatchResources: &admissionregistrationv1.MatchResources{NamespaceSelector: nsSelector(ns)}}}, metav1.CreateOptions{})
	must(t, err, "create binding %s", p.Name)
	t.Cleanup(func() { _ = bindings.Delete(ctxT(t), p.Name, metav1.DeleteOptions{}) })
}

func init() {
	register("MutatingAdmissionPolicyAndWebhook", testMutatingPolicyAndWebhook)
}

// testMutatingPolicyAndWebhook: a policy with reinvocationPolicy IfNeeded
// runs before the mutating webhooks; when a webhook then changes the
// object, the chain runs the policy again (upstream's reinvocation across
// plug-ins), so it sees the webhook's label.
func testMutatingPolicyAndWebhook(t *testing.T, s *testutil.Server) {
	ctx := ctxT(t)
	ns := newNamespace(t, s.Clientset)
	createMutatingPolicy(t, s, mutatingPolicy("it-map-saw-b-"+ns, admissionregistrationv1.Mutation{
		PatchType: admissionregistrationv1.PatchTypeApplyConfiguration,
		ApplyConfiguration: &admissionregistrationv1.ApplyConfiguration{Expression: `Object{metadata: Object.metadata{labels: {
			"saw-b": ("b" in object.metadata.labels) ? "yes" : "no"}}}`}}), ns)
	hs := newWebhookServer(t, "b."+ns+".svc")
	cfgs := s.Clientset.AdmissionregistrationV1().MutatingWebhookConfigurations()
	name := "it-b-" + ns
	_, err := cfgs.Create(ctx, &admissionregistrationv1.MutatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: name},
		Webhooks: []admissionregistrationv1.MutatingWebhook{{Name: "b.orch.test",
			ClientConfig: admissionregistrationv1.WebhookClientConfig{URL: hs.url("/mutate-b"), CABundle: hs.caPEM},
			Rules:        configMapRule(), NamespaceSelector: nsSelector(ns),
			SideEffects: ptr.To(admissionregistrationv1.SideEffectClassNone), AdmissionReviewVersions: []string{"v1"}}}}, metav1.CreateOptions{})
	must(t, err, "webhook configuration")
	t.Cleanup(func() { _ = cfgs.Delete(ctxT(t), name, metav1.DeleteOptions{}) })
	cms := s.Clientset.CoreV1().ConfigMaps(ns)
	waitFor(t, "the policy to see the webhook's label", func() error {
		c := cm(ns, "", nil)
		c.GenerateName, c.Labels = "m-", map[string]string{"app": "x"}
		got, err := cms.Create(ctx, c, metav1.CreateOptions{})
		if err != nil {
			return err
		}
		_ = cms.Delete(ctx, got.Name, metav1.DeleteOptions{})
		if got.Labels["b"] != "set" || got.Labels["saw-b"] != "yes" {
			return fmt.Errorf("labels %v", got.Labels)
		}
		return nil
	})
}

func init() {
	register("MutatingAdmissionPolicyCustomResource", testMutatingPolicyCustomResource)
}

// testMutatingPolicyCustomResource: an ApplyConfiguration policy on a
// custom resource whose CRD appears after the plug-in started. The merge
// needs the CRD's OpenAPI v3 document, which the plug-in's type converters
// find through the index they poll (in process in orch).
func testMutatingPolicyCustomResource(t *testing.T, s *testutil.Server) {
	ctx := ctxT(t)
	ext, err := apiextclient.NewForConfig(s.Config)
	must(t, err, "apiextensions client")
	dyn, err := dynamic.NewForConfig(s.Config)
	must(t, err, "dynamic client")
	group := fmt.Sprintf("itmap%04x.example.com", time.Now().UnixNano()&0xffff)
	createEstablished(t, ext, widgetCRD(group))
	ns := newNamespace(t, s.Clientset)
	p := mutatingPolicy("it-map-cr-"+ns, admissionregistrationv1.Mutation{PatchType: admissionregistrationv1.PatchTypeApplyConfiguration,
		ApplyConfiguration: &admissionregistrationv1.ApplyConfiguration{Expression: `Object{spec: Object.spec{color: "blue"}}`}})
	p.Spec.MatchConstraints.ResourceRules[0].Rule = admissionregistrationv1.Rule{APIGroups: []string{group}, APIVersions: []string{"v1"},
		Resources: []string{"widgets"}}
	createMutatingPolicy(t, s, p, ns)
	wi := dyn.Resource(schema.GroupVersionResource{Group: group, Version: "v1", Resource: "widgets"}).Namespace(ns)
	waitFor(t, "the policy to set spec.color", func() error {
		w := widget(group, "", map[string]interface{}{"size": "small"})
		w.SetGenerateName("w-")
		got, err := wi.Create(ctx, w, metav1.CreateOptions{})
		if err != nil {
			return err
		}
		_ = wi.Delete(ctx, got.GetName(), metav1.DeleteOptions{})
		if c, _, _ := unstructured.NestedString(got.Object, "spec", "color"); c != "blue" {
			return fmt.Errorf("spec %v", got.Object["spec"])
		}
		return nil
	})
}
