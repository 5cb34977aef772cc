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
