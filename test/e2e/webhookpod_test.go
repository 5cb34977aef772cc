package e2e

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"path/filepath"
	"strings"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	testimages "github.com/orch/orch/test/images"
	"github.com/orch/orch/test/testutil"
)

// webhookServedByAPod: admission webhooks served by a pod behind a Service
// (the API server reaches the pod's endpoint): the validating one rejects a
// ConfigMap, the mutating one labels another.
func webhookServedByAPod(t *testing.T, e *agentEnv) {
	ctx := context.Background()
	cs := e.server.Clientset
	root, err := testutil.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	err = testimages.WriteImage(filepath.Join(e.dataDir, "agent", "images", "webhook.tar"),
		[]testimages.File{{Name: "webhook", Mode: 0o755, Data: buildStatic(t, root, "./test/images/webhook")}},
		testimages.Config{Entrypoint: []string{"/webhook"}}, "orch.test/webhook:1")
	if err != nil {
		t.Fatal(err)
	}
	caPEM, certPEM, keyPEM := webhookCert(t, "hooks.default.svc")
	_, err = cs.CoreV1().Secrets("default").Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "hooks-tls"},
		Type: corev1.SecretTypeTLS, Data: map[string][]byte{"tls.crt": certPEM, "tls.key": keyPEM}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	createPod(t, cs, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "hooks", Labels: map[string]string{"app": "hooks"}},
		Spec: corev1.PodSpec{NodeName: e.node,
			Containers: []corev1.Container{{Name: "webhook", Image: "orch.test/webhook:1", ImagePullPolicy: corev1.PullNever,
				VolumeMounts: []corev1.VolumeMount{{Name: "tls", MountPath: "/tls"}}}},
			Volumes: []corev1.Volume{{Name: "tls", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "hooks-tls"}}}}}})
	_, err = cs.CoreV1().Services("default").Create(ctx, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "hooks"},
		Spec: corev1.ServiceSpec{Selector: map[string]string{"app": "hooks"},
			Ports: []corev1.ServicePort{{Port: 443, TargetPort: intstr.FromInt32(8443)}}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	waitPod(t, cs, "hooks", "Running and Ready", podReady)
	registerPodWebhooks(t, e, caPEM)
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "hooked"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	cms := cs.CoreV1().ConfigMaps("hooked")
	waitFor(t, 60*time.Second, "the pod's validating webhook to deny", func() (bool, error) {
		_, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{GenerateName: "denied-",
			Labels: map[string]string{"deny": "yes"}}}, metav1.CreateOptions{})
		return err != nil && strings.Contains(err.Error(), `admission webhook "deny.hooks.example.com" denied the request: denied by the pod webhook`), nil
	})
	cm, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "plain"}}, metav1.CreateOptions{})
	if err != nil || cm.Labels["mutated"] != "yes" {
		t.Fatalf("the pod's mutating webhook: %v, labels %v", err, cm.Labels)
	}
}

func registerPodWebhooks(t *testing.T, e *agentEnv, caPEM []byte) {
	ctx := context.Background()
	ar := e.server.Clientset.AdmissionregistrationV1()
	rules := []admissionregistrationv1.RuleWithOperations{{Operations: []admissionregistrationv1.OperationType{"CREATE"},
		Rule: admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"configmaps"}}}}
	nsSel := &metav1.LabelSelector{MatchLabels: map[string]string{"kubernetes.io/metadata.name": "hooked"}}
	svc := func(path string) admissionregistrationv1.WebhookClientConfig {
		return admissionregistrationv1.WebhookClientConfig{CABundle: caPEM,
			Service: &admissionregistrationv1.ServiceReference{Namespace: "default", Name: "hooks", Path: ptr.To(path)}}
	}
	none := ptr.To(admissionregistrationv1.SideEffectClassNone)
	_, err := ar.ValidatingWebhookConfigurations().Create(ctx, &admissionregistrationv1.ValidatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: "hooks"}, Webhooks: []admissionregistrationv1.ValidatingWebhook{{Name: "deny.hooks.example.com",
			ClientConfig: svc("/validate"), Rules: rules, NamespaceSelector: nsSel, SideEffects: none, AdmissionReviewVersions: []string{"v1"}}}},
		metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = ar.MutatingWebhookConfigurations().Create(ctx, &admissionregistrationv1.MutatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: "hooks"}, Webhooks: []admissionregistrationv1.MutatingWebhook{{Name: "label.hooks.example.com",
			ClientConfig: svc("/mutate"), Rules: rules, NamespaceSelector: nsSel, SideEffects: none, AdmissionReviewVersions: []string{"v1"}}}},
		metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
}

// webhookCert returns a self-signed CA-and-serving certificate for dnsName
// (PEM) and its key.
func webhookCert(t *testing.T, dnsName string) (caPEM, certPEM, keyPEM []byte) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: dnsName}, DNSNames: []string{dnsName},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kb, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certPEM = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	return certPEM, certPEM, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb})
}
