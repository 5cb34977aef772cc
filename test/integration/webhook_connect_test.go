package integration

import (
	"strings"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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
