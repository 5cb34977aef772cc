package integration

import (
	"fmt"
	"strings"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apiextclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/utils/ptr"

	"github.com/orch/orch/test/testutil"
)

func init() {
	register("AdmissionWebhookConnect", testAdmissionWebhookConnect)
}

// testAdmissionWebhookConnect: a validating webhook for CONNECT on
// pods/attach sees the PodAttachOptions and its denial is the answer to
// the attach, before any stream is opened.
func testAdmissionWebhookConnect(t *testing.T, s *testutil.Server) {
	ctx := ctxT(t)
	ns := newNamespace(t, s.Clientset)
	hs := newWebhookServer(t, "connect."+ns+".svc")
	_, err := s.Clientset.CoreV1().Pods(ns).Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p"},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}}, metav1.CreateOptions{})
	must(t, err, "pod")
	cfgs := s.Clientset.AdmissionregistrationV1().ValidatingWebhookConfigurations()
	name := "it-connect-" + ns
	_, err = cfgs.Create(ctx, &admissionregistrationv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: name},
		Webhooks: []admissionregistrationv1.ValidatingWebhook{{Name: "deny-attach.orch.test",
			ClientConfig: admissionregistrationv1.WebhookClientConfig{URL: hs.url("/deny-connect"), CABundle: hs.caPEM},
			Rules: []admissionregistrationv1.RuleWithOperations{{Operations: []admissionregistrationv1.OperationType{"CONNECT"},
				Rule: admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"pods/attach"}}}},
			NamespaceSelector: nsSelector(ns), SideEffects: ptr.To(admissionregistrationv1.SideEffectClassNone),
			AdmissionReviewVersions: []string{"v1"}}}}, metav1.CreateOptions{})
	must(t, err, "webhook configuration")
	t.Cleanup(func() { _ = cfgs.Delete(ctxT(t), name, metav1.DeleteOptions{}) })
	waitFor(t, "the webhook to deny attach", func() error {
		err := s.Clientset.CoreV1().RESTClient().Post().Namespace(ns).Resource("pods").Name("p").SubResource("attach").
			Param("container", "c").Param("stdout", "true").Do(ctx).Error()
		want := "CONNECT of PodAttachOptions/attach to pod p is not allowed"
		if st := statusOf(err); st == nil || st.Code != 403 || !strings.Contains(st.Message, want) {
			return err
		}
		return nil
	})
}

func init() {
	register("AdmissionWebhookDefaults", testAdmissionWebhookDefaults)
}

// testAdmissionWebhookDefaults: an init container a mutating webhook adds
// gets the defaults (imagePullPolicy, terminationMessagePolicy) before
// validation, as upstream decodes a webhook's output with defaulting.
func testAdmissionWebhookDefaults(t *testing.T, s *testutil.Server) {
	ctx := ctxT(t)
	ns := newNamespace(t, s.Clientset)
	hs := newWebhookServer(t, "defaults."+ns+".svc")
	cfgs := s.Clientset.AdmissionregistrationV1().MutatingWebhookConfigurations()
	name := "it-defaults-" + ns
	_, err := cfgs.Create(ctx, &admissionregistrationv1.MutatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: name},
		Webhooks: []admissionregistrationv1.MutatingWebhook{{Name: "add-init.orch.test",
			ClientConfig: admissionregistrationv1.WebhookClientConfig{URL: hs.url("/add-init"), CABundle: hs.caPEM},
			Rules: []admissionregistrationv1.RuleWithOperations{{Operations: []admissionregistrationv1.OperationType{"CREATE"},
				Rule: admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"pods"}}}},
			NamespaceSelector: nsSelector(ns), SideEffects: ptr.To(admissionregistrationv1.SideEffectClassNone),
			AdmissionReviewVersions: []string{"v1"}}}}, metav1.CreateOptions{})
	must(t, err, "webhook configuration")
	t.Cleanup(func() { _ = cfgs.Delete(ctxT(t), name, metav1.DeleteOptions{}) })
	pods := s.Clientset.CoreV1().Pods(ns)
	waitFor(t, "the webhook to add a defaulted init container", func() error {
		p, err := pods.Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{GenerateName: "p-"},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}}, metav1.CreateOptions{})
		if err != nil {
			return err
		}
		_ = pods.Delete(ctx, p.Name, metav1.DeleteOptions{GracePeriodSeconds: ptr.To(int64(0))})
		if len(p.Spec.InitContainers) != 1 {
			return errString("no init container yet")
		}
		if c := p.Spec.InitContainers[0]; c.ImagePullPolicy != corev1.PullAlways || c.TerminationMessagePolicy != corev1.TerminationMessageReadFile {
			t.Fatalf("injected init container not defaulted: %+v", c)
		}
		return nil
	})
}

func init() {
	register("AdmissionWebhookCustomResource", testAdmissionWebhookCustomResource)
	register("AdmissionWebhookEquivalentVersion", testAdmissionWebhookEquivalent)
}

// testAdmissionWebhookEquivalent: a webhook whose rules name v1 of a
// custom resource served as v1 and v2 (matchPolicy Equivalent, the
// default) also sees v2 requests, converted to v1 with requestKind v2; its
// patch comes back in v2. Under matchPolicy Exact it does not.
func testAdmissionWebhookEquivalent(t *testing.T, s *testutil.Server) {
	ctx := ctxT(t)
	ext, err := apiextclient.NewForConfig(s.Config)
	must(t, err, "apiextensions client")
	dyn, err := dynamic.NewForConfig(s.Config)
	must(t, err, "dynamic client")
	group := fmt.Sprintf("eq%04x.example.com", time.Now().UnixNano()&0xffff)
	crd := widgetCRD(group)
	v2 := *crd.Spec.Versions[0].DeepCopy()
	v2.Name, v2.Storage = "v2", false
	crd.Spec.Versions = append(crd.Spec.Versions, v2)
	createEstablished(t, ext, crd)
	ns := newNamespace(t, s.Clientset)
	hs := newWebhookServer(t, "widgets."+ns+".svc")
	cfgs := s.Clientset.AdmissionregistrationV1().MutatingWebhookConfigurations()
	hook := func(name string, policy admissionregistrationv1.MatchPolicyType) admissionregistrationv1.MutatingWebhook {
		return admissionregistrationv1.MutatingWebhook{Name: name, MatchPolicy: &policy,
			ClientConfig: admissionregistrationv1.WebhookClientConfig{URL: hs.url("/mutate-version"), CABundle: hs.caPEM},
			Rules: []admissionregistrationv1.RuleWithOperations{{Operations: []admissionregistrationv1.OperationType{"CREATE"},
				Rule: admissionregistrationv1.Rule{APIGroups: []string{group}, APIVersions: []string{"v1"}, Resources: []string{"widgets"}}}},
			NamespaceSelector: nsSelector(ns), ObjectSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"policy": string(policy)}},
			SideEffects: ptr.To(admissionregistrationv1.SideEffectClassNone), AdmissionReviewVersions: []string{"v1"}}
	}
	name := "it-equivalent-" + ns
	_, err = cfgs.Create(ctx, &admissionregistrationv1.MutatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: name},
		Webhooks: []admissionregistrationv1.MutatingWebhook{hook("equivalent.orch.test", admissionregistrationv1.Equivalent),
			hook("exact.orch.test", admissionregistrationv1.Exact)}}, metav1.CreateOptions{})
	must(t, err, "webhook configuration")
	t.Cleanup(func() { _ = cfgs.Delete(ctxT(t), name, metav1.DeleteOptions{}) })
	create := func(version, policy string) *unstructured.Unstructured {
		w := widget(group, "", map[string]interface{}{"size": "small"})
		w.SetAPIVersion(group + "/" + version)
		w.SetGenerateName("w-")
		w.SetLabels(map[string]string{"policy": policy})
		got, err := dyn.Resource(schema.GroupVersionResource{Group: group, Version: version, Resource: "widgets"}).Namespace(ns).
			Create(ctx, w, metav1.CreateOptions{})
		must(t, err, "create %s", version)
		return got
	}
	waitFor(t, "the webhook to be called", func() error {
		if create("v1", "Equivalent").GetLabels()["seen"] == "" {
			return errString("not called yet")
		}
		return nil
	})
	for _, c := range []struct{ version, policy, want string }{
		{"v1", "Equivalent", "v1-from-v1-obj-v1"}, {"v2", "Equivalent", "v1-from-v2-obj-v1"},
		{"v1", "Exact", "v1-from-v1-obj-v1"}, {"v2", "Exact", ""}} {
		got := create(c.version, c.policy)
		if seen := got.GetLabels()["seen"]; seen != c.want || got.GetAPIVersion() != group+"/"+c.version {
			t.Errorf("%s under %s: seen %q (want %q), apiVersion %s", c.version, c.policy, seen, c.want, got.GetAPIVersion())
		}
	}
}

// testAdmissionWebhookCustomResource: what a mutating webhook returns for
// a custom resource is pruned and defaulted by the CRD's schema.
func testAdmissionWebhookCustomResource(t *testing.T, s *testutil.Server) {
	ctx := ctxT(t)
	ext, err := apiextclient.NewForConfig(s.Config)
	must(t, err, "apiextensions client")
	dyn, err := dynamic.NewForConfig(s.Config)
	must(t, err, "dynamic client")
	group := fmt.Sprintf("wh%04x.example.com", time.Now().UnixNano()&0xffff)
	createEstablished(t, ext, widgetCRD(group))
	ns := newNamespace(t, s.Clientset)
	hs := newWebhookServer(t, "widgets."+ns+".svc")
	cfgs := s.Clientset.AdmissionregistrationV1().MutatingWebhookConfigurations()
	name := "it-widgets-" + ns
	_, err = cfgs.Create(ctx, &admissionregistrationv1.MutatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: name},
		Webhooks: []admissionregistrationv1.MutatingWebhook{{Name: "widgets.orch.test",
			ClientConfig: admissionregistrationv1.WebhookClientConfig{URL: hs.url("/mutate-widget"), CABundle: hs.caPEM},
			Rules: []admissionregistrationv1.RuleWithOperations{{Operations: []admissionregistrationv1.OperationType{"CREATE"},
				Rule: admissionregistrationv1.Rule{APIGroups: []string{group}, APIVersions: []string{"v1"}, Resources: []string{"widgets"}}}},
			NamespaceSelector: nsSelector(ns), SideEffects: ptr.To(admissionregistrationv1.SideEffectClassNone),
			AdmissionReviewVersions: []string{"v1"}}}}, metav1.CreateOptions{})
	must(t, err, "webhook configuration")
	t.Cleanup(func() { _ = cfgs.Delete(ctxT(t), name, metav1.DeleteOptions{}) })
	wi := dyn.Resource(schema.GroupVersionResource{Group: group, Version: "v1", Resource: "widgets"}).Namespace(ns)
	waitFor(t, "the webhook's output to be pruned and defaulted", func() error {
		w := widget(group, "", map[string]interface{}{"size": "small", "replicas": int64(3)})
		w.SetGenerateName("w-")
		got, err := wi.Create(ctx, w, metav1.CreateOptions{})
		if err != nil {
			return err
		}
		spec, _ := got.Object["spec"].(map[string]interface{})
		if spec["replicas"] == int64(3) {
			return errString("not mutated yet")
		}
		if _, unknown := spec["unknown"]; unknown || spec["replicas"] != int64(1) {
			t.Fatalf("mutated widget spec %v", spec)
		}
		return nil
	})
}
