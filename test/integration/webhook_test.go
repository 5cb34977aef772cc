package integration

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/orch/orch/test/testutil"
)

func init() {
	register("AdmissionWebhooks", testAdmissionWebhooks)
}

// webhookServer is a TLS admission webhook on loopback: /validate denies
// ConfigMaps labelled deny=yes, /mutate adds the label mutated=yes.
type webhookServer struct {
	srv     *httptest.Server
	caPEM   []byte
	calls   chan string
	mu      sync.Mutex
	version string // apiVersion of the last review
}

func (w *webhookServer) lastVersion() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.version
}

func newWebhookServer(t *testing.T, dnsName string) *webhookServer {
	t.Helper()
	w := &webhookServer{calls: make(chan string, 100)}
	w.srv, w.caPEM = newTLSServer(t, dnsName, http.HandlerFunc(w.serve))
	return w
}

// newTLSServer serves h over TLS on loopback with a self-signed
// certificate for dnsName and 127.0.0.1; caPEM is that certificate.
func newTLSServer(t *testing.T, dnsName string, h http.Handler) (srv *httptest.Server, caPEM []byte) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	must(t, err, "key")
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: dnsName},
		DNSNames: []string{dnsName}, IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IsCA: true, BasicConstraintsValid: true}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	must(t, err, "cert")
	srv = httptest.NewUnstartedServer(h)
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}}}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return srv, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}

func (w *webhookServer) serve(rw http.ResponseWriter, r *http.Request) {
	var review admissionv1.AdmissionReview
	if err := json.NewDecoder(r.Body).Decode(&review); err != nil || review.Request == nil {
		http.Error(rw, "bad review", http.StatusBadRequest)
		return
	}
	w.mu.Lock()
	w.version = review.APIVersion
	w.mu.Unlock()
	select {
	case w.calls <- r.URL.Path:
	default:
	}
	var obj struct {
		Metadata metav1.ObjectMeta `json:"metadata"`
	}
	_ = json.Unmarshal(review.Request.Object.Raw, &obj)
	resp := &admissionv1.AdmissionResponse{UID: review.Request.UID, Allowed: true}
	switch r.URL.Path {
	case "/validate":
		if obj.Metadata.Labels["deny"] == "yes" {
			resp.Allowed = false
			resp.Result = &metav1.Status{Code: 403, Message: "configmaps labelled deny=yes are not welcome"}
		}
		resp.Warnings = []string{"validated by the test webhook"}
	case "/mutate":
		op := `{"op":"add","path":"/metadata/labels","value":{"mutated":"yes"}}`
		if len(obj.Metadata.Labels) > 0 {
			op = `{"op":"add","path":"/metadata/labels/mutated","value":"yes"}`
		}
		resp.Patch = []byte("[" + op + "]")
		resp.PatchType = ptr.To(admissionv1.PatchTypeJSONPatch)
	case "/mutate-saw": // records whether a label b was there when it ran
		saw := "no"
		if obj.Metadata.Labels["b"] != "" {
			saw = "yes"
		}
		resp.Patch = []byte(`[{"op":"add","path":"/metadata/labels/saw-b","value":"` + saw + `"}]`)
		resp.PatchType = ptr.To(admissionv1.PatchTypeJSONPatch)
	case "/mutate-b":
		resp.Patch = []byte(`[{"op":"add","path":"/metadata/labels/b","value":"set"}]`)
		resp.PatchType = ptr.To(admissionv1.PatchTypeJSONPatch)
	case "/mutate-version": // labels the versions it saw: kind, requestKind, the object's apiVersion
		var tm metav1.TypeMeta
		_ = json.Unmarshal(review.Request.Object.Raw, &tm)
		_, objVersion, _ := strings.Cut(tm.APIVersion, "/")
		seen := review.Request.Kind.Version + "-from-" + review.Request.RequestKind.Version + "-obj-" + objVersion
		resp.Patch = []byte(`[{"op":"add","path":"/metadata/labels","value":{"seen":"` + seen + `"}}]`)
		resp.PatchType = ptr.To(admissionv1.PatchTypeJSONPatch)
	case "/deny-connect":
		resp.Allowed = false
		resp.Result = &metav1.Status{Code: 403, Message: fmt.Sprintf("%s of %s/%s to pod %s is not allowed",
			review.Request.Operation, review.Request.Kind.Kind, review.Request.SubResource, review.Request.Name)}
	case "/add-init": // adds an init container without the fields defaults fill in
		resp.Patch = []byte(`[{"op":"add","path":"/spec/initContainers","value":[{"name":"injected","image":"busybox"}]}]`)
		resp.PatchType = ptr.To(admissionv1.PatchTypeJSONPatch)
	case "/mutate-widget": // a field the schema lacks, and one with a default removed
		resp.Patch = []byte(`[{"op":"add","path":"/spec/unknown","value":"x"},{"op":"remove","path":"/spec/replicas"}]`)
		resp.PatchType = ptr.To(admissionv1.PatchTypeJSONPatch)
	case "/garbage":
		_, _ = rw.Write([]byte("not json"))
		return
	}
	review.Response = resp
	review.Request = nil
	_ = json.NewEncoder(rw).Encode(review)
}

func (w *webhookServer) url(path string) *string { return ptr.To(w.srv.URL + path) }

func (w *webhookServer) port() int32 {
	_, p, _ := net.SplitHostPort(strings.TrimPrefix(w.srv.URL, "https://"))
	n, _ := strconv.Atoi(p)
	return int32(n)
}

func configMapRule() []admissionregistrationv1.RuleWithOperations {
	return []admissionregistrationv1.RuleWithOperations{{Operations: []admissionregistrationv1.OperationType{"CREATE", "UPDATE"},
		Rule: admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"configmaps"}}}}
}

func nsSelector(ns string) *metav1.LabelSelector {
	return &metav1.LabelSelector{MatchLabels: map[string]string{"kubernetes.io/metadata.name": ns}}
}

func testAdmissionWebhooks(t *testing.T, s *testutil.Server) {
	ns := newNamespace(t, s.Clientset)
	ctx := ctxT(t)
	svcName := "hooks"
	hs := newWebhookServer(t, svcName+"."+ns+".svc")
	none := ptr.To(admissionregistrationv1.SideEffectClassNone)
	vwc := &admissionregistrationv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: "it-" + ns},
		Webhooks: []admissionregistrationv1.ValidatingWebhook{{Name: "deny.it.example.com",
			ClientConfig: admissionregistrationv1.WebhookClientConfig{URL: hs.url("/validate"), CABundle: hs.caPEM},
			Rules:        configMapRule(), NamespaceSelector: nsSelector(ns), SideEffects: none, AdmissionReviewVersions: []string{"v1"},
			MatchConditions: []admissionregistrationv1.MatchCondition{
				{Name: "not-exempt", Expression: "object.metadata.name != 'exempt'"},
				{Name: "may-create", Expression: "authorizer.group('').resource('configmaps').namespace(request.namespace).check('create').allowed()"},
			}}}}
	_, err := s.Clientset.AdmissionregistrationV1().ValidatingWebhookConfigurations().Create(ctx, vwc, metav1.CreateOptions{})
	must(t, err, "create validating config")
	t.Cleanup(func() {
		_ = s.Clientset.AdmissionregistrationV1().ValidatingWebhookConfigurations().Delete(ctxT(t), vwc.Name, metav1.DeleteOptions{})
	})
	cms := s.Clientset.CoreV1().ConfigMaps(ns)
	cm := func(name string, labels map[string]string) *corev1.ConfigMap {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}
	}
	waitFor(t, "the validating webhook to deny", func() error {
		_, err := cms.Create(ctx, cm("denied", map[string]string{"deny": "yes"}), metav1.CreateOptions{})
		if err == nil {
			_ = cms.Delete(ctx, "denied", metav1.DeleteOptions{})
			return errString("created")
		}
		if !strings.Contains(err.Error(), `admission webhook "deny.it.example.com" denied the request: configmaps labelled deny=yes are not welcome`) {
			t.Fatalf("denial: %v", err)
		}
		return nil
	})
	_, err = cms.Create(ctx, cm("welcome", nil), metav1.CreateOptions{})
	must(t, err, "create an allowed configmap")
	_, err = cms.Create(ctx, cm("exempt", map[string]string{"deny": "yes"}), metav1.CreateOptions{})
	must(t, err, "create a configmap a matchCondition exempts from the webhook")
	t.Run("mutating by service", func(t *testing.T) { testMutatingByService(t, s, hs, ns, svcName) })
	t.Run("failure policy", func(t *testing.T) { testFailurePolicy(t, s, hs, ns) })
	t.Run("reinvocation", func(t *testing.T) { testReinvocation(t, s, hs, ns) })
	t.Run("AdmissionReview v1beta1", func(t *testing.T) { testReviewV1beta1(t, s, hs) })
	t.Run("bad configurations", func(t *testing.T) { testBadWebhookConfigs(t, s) })
}

// testMutatingByService: a mutating webhook reached through a Service and
// its EndpointSlice (loopback here) adds a label; dry-run runs it too.
func testMutatingByService(t *testing.T, s *testutil.Server, hs *webhookServer, ns, svcName string) {
	ctx := ctxT(t)
	_, err := s.Clientset.CoreV1().Services(ns).Create(ctx, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: svcName},
		Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "https", Port: 443}}}}, metav1.CreateOptions{})
	must(t, err, "service")
	_, err = s.Clientset.DiscoveryV1().EndpointSlices(ns).Create(ctx, &discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Name: svcName + "-1", Labels: map[string]string{discoveryv1.LabelServiceName: svcName}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Endpoints:   []discoveryv1.Endpoint{{Addresses: []string{"127.0.0.1"}, Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true)}}},
		Ports:       []discoveryv1.EndpointPort{{Name: ptr.To("https"), Port: ptr.To(hs.port())}},
	}, metav1.CreateOptions{})
	must(t, err, "endpointslice")
	mwc := &admissionregistrationv1.MutatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: "it-m-" + ns},
		Webhooks: []admissionregistrationv1.MutatingWebhook{{Name: "label.it.example.com",
			ClientConfig: admissionregistrationv1.WebhookClientConfig{CABundle: hs.caPEM,
				Service: &admissionregistrationv1.ServiceReference{Namespace: ns, Name: svcName, Path: ptr.To("/mutate")}},
			Rules: configMapRule(), NamespaceSelector: nsSelector(ns), ObjectSelector: &metav1.LabelSelector{
				MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "skip", Operator: metav1.LabelSelectorOpDoesNotExist}}},
			SideEffects: ptr.To(admissionregistrationv1.SideEffectClassNone), AdmissionReviewVersions: []string{"v1"}}}}
	_, err = s.Clientset.AdmissionregistrationV1().MutatingWebhookConfigurations().Create(ctx, mwc, metav1.CreateOptions{})
	must(t, err, "create mutating config")
	t.Cleanup(func() {
		_ = s.Clientset.AdmissionregistrationV1().MutatingWebhookConfigurations().Delete(ctxT(t), mwc.Name, metav1.DeleteOptions{})
	})
	cms := s.Clientset.CoreV1().ConfigMaps(ns)
	i := 0
	waitFor(t, "the mutating webhook to label", func() error {
		i++
		got, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "m" + strconv.Itoa(i)}}, metav1.CreateOptions{})
		if err != nil {
			return err
		}
		if got.Labels["mutated"] != "yes" {
			return errString("not labelled")
		}
		return nil
	})
	skipped, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "skipped", Labels: map[string]string{"skip": "1"}}}, metav1.CreateOptions{})
	must(t, err, "create a configmap the objectSelector leaves out")
	if skipped.Labels["mutated"] != "" {
		t.Fatal("objectSelector did not exclude the configmap")
	}
	dry, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "dry"}}, metav1.CreateOptions{DryRun: []string{"All"}})
	must(t, err, "dry-run create")
	if dry.Labels["mutated"] != "yes" {
		t.Fatal("dry run skipped the mutating webhook")
	}
	if _, err := cms.Get(ctx, "dry", metav1.GetOptions{}); err == nil {
		t.Fatal("a dry-run create was stored")
	}
}

// testFailurePolicy: an unreachable webhook fails the request under Fail
// and is skipped under Ignore; an answer that is not a review fails too.
func testFailurePolicy(t *testing.T, s *testutil.Server, hs *webhookServer, ns string) {
	ctx := ctxT(t)
	dead := "https://127.0.0.1:1/validate"
	mk := func(name, url string, fp admissionregistrationv1.FailurePolicyType, label string) *admissionregistrationv1.ValidatingWebhookConfiguration {
		return &admissionregistrationv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: name + "-" + ns},
			Webhooks: []admissionregistrationv1.ValidatingWebhook{{Name: name + ".it.example.com",
				ClientConfig: admissionregistrationv1.WebhookClientConfig{URL: &url, CABundle: hs.caPEM},
				Rules:        configMapRule(), NamespaceSelector: nsSelector(ns), FailurePolicy: &fp, TimeoutSeconds: ptr.To(int32(2)),
				ObjectSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"policy": label}},
				SideEffects:    ptr.To(admissionregistrationv1.SideEffectClassNone), AdmissionReviewVersions: []string{"v1"}}}}
	}
	vwcs := s.Clientset.AdmissionregistrationV1().ValidatingWebhookConfigurations()
	for _, c := range []*admissionregistrationv1.ValidatingWebhookConfiguration{
		mk("fail", dead, admissionregistrationv1.Fail, "fail"), mk("ignore", dead, admissionregistrationv1.Ignore, "ignore"),
		mk("garbage", *hs.url("/garbage"), admissionregistrationv1.Fail, "garbage"),
		withCondition(mk("condfail", *hs.url("/validate"), admissionregistrationv1.Fail, "condfail"), "object.metadata.labels['missing'] == 'x'"),
		withCondition(mk("condignore", dead, admissionregistrationv1.Ignore, "condignore"), "object.metadata.labels['missing'] == 'x'"),
	} {
		_, err := vwcs.Create(ctx, c, metav1.CreateOptions{})
		must(t, err, "create %s", c.Name)
		name := c.Name
		t.Cleanup(func() { _ = vwcs.Delete(ctxT(t), name, metav1.DeleteOptions{}) })
	}
	cms := s.Clientset.CoreV1().ConfigMaps(ns)
	for _, label := range []string{"fail", "garbage"} {
		waitFor(t, "failurePolicy Fail ("+label+")", func() error {
			_, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{GenerateName: label + "-",
				Labels: map[string]string{"policy": label}}}, metav1.CreateOptions{})
			if err == nil {
				return errString("created")
			}
			if st := statusOf(err); st == nil || st.Code != 500 || !strings.Contains(st.Message, `failed calling webhook "`+label+`.it.example.com"`) {
				t.Fatalf("failure under Fail: %v", err)
			}
			return nil
		})
	}
	_, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "ignored",
		Labels: map[string]string{"policy": "ignore"}}}, metav1.CreateOptions{})
	must(t, err, "create past an unreachable webhook with failurePolicy Ignore")
	_, err = cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cond-ignored",
		Labels: map[string]string{"policy": "condignore"}}}, metav1.CreateOptions{})
	must(t, err, "create past a matchCondition that errs, with failurePolicy Ignore")
	_, err = cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cond-failed",
		Labels: map[string]string{"policy": "condfail"}}}, metav1.CreateOptions{})
	if st := statusOf(err); st == nil || st.Code != 500 || !strings.Contains(st.Message, "failed to evaluate match conditions") {
		t.Fatalf("a matchCondition that errs under Fail: %v", err)
	}
}

// testReinvocation: a webhook with reinvocationPolicy IfNeeded runs again
// after a later webhook changed the object; one with Never does not.
func testReinvocation(t *testing.T, s *testutil.Server, hs *webhookServer, ns string) {
	ctx := ctxT(t)
	hook := func(name, path string, policy admissionregistrationv1.ReinvocationPolicyType, label string) admissionregistrationv1.MutatingWebhook {
		return admissionregistrationv1.MutatingWebhook{Name: name + ".it.example.com",
			ClientConfig: admissionregistrationv1.WebhookClientConfig{URL: hs.url(path), CABundle: hs.caPEM},
			Rules:        configMapRule(), NamespaceSelector: nsSelector(ns), ReinvocationPolicy: &policy,
			ObjectSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"reinvoke": label}},
			SideEffects:    ptr.To(admissionregistrationv1.SideEffectClassNone), AdmissionReviewVersions: []string{"v1"}}
	}
	mwcs := s.Clientset.AdmissionregistrationV1().MutatingWebhookConfigurations()
	for _, c := range []*admissionregistrationv1.MutatingWebhookConfiguration{
		{ObjectMeta: metav1.ObjectMeta{Name: "it-r1-" + ns}, Webhooks: []admissionregistrationv1.MutatingWebhook{
			hook("saw-ifneeded", "/mutate-saw", admissionregistrationv1.IfNeededReinvocationPolicy, "ifneeded"),
			hook("saw-never", "/mutate-saw", admissionregistrationv1.NeverReinvocationPolicy, "never")}},
		{ObjectMeta: metav1.ObjectMeta{Name: "it-r2-" + ns}, Webhooks: []admissionregistrationv1.MutatingWebhook{
			hook("b-ifneeded", "/mutate-b", admissionregistrationv1.NeverReinvocationPolicy, "ifneeded"),
			hook("b-never", "/mutate-b", admissionregistrationv1.NeverReinvocationPolicy, "never")}},
	} {
		_, err := mwcs.Create(ctx, c, metav1.CreateOptions{})
		must(t, err, "create %s", c.Name)
		name := c.Name
		t.Cleanup(func() { _ = mwcs.Delete(ctxT(t), name, metav1.DeleteOptions{}) })
	}
	cms := s.Clientset.CoreV1().ConfigMaps(ns)
	for label, want := range map[string]string{"ifneeded": "yes", "never": "no"} {
		waitFor(t, "reinvocation "+label, func() error {
			got, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{GenerateName: "r-",
				Labels: map[string]string{"reinvoke": label}}}, metav1.CreateOptions{})
			if err != nil {
				return err
			}
			if got.Labels["b"] != "set" || got.Labels["saw-b"] != want {
				return fmt.Errorf("labels %v, want saw-b=%s", got.Labels, want)
			}
			return nil
		})
	}
}

// testReviewV1beta1: a webhook that only speaks AdmissionReview v1beta1
// gets v1beta1 reviews and its answers count.
func testReviewV1beta1(t *testing.T, s *testutil.Server, hs *webhookServer) {
	ctx := ctxT(t)
	ns := newNamespace(t, s.Clientset)
	vwcs := s.Clientset.AdmissionregistrationV1().ValidatingWebhookConfigurations()
	c := &admissionregistrationv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: "it-beta-" + ns},
		Webhooks: []admissionregistrationv1.ValidatingWebhook{{Name: "beta.it.example.com",
			ClientConfig: admissionregistrationv1.WebhookClientConfig{URL: hs.url("/validate"), CABundle: hs.caPEM},
			Rules:        configMapRule(), NamespaceSelector: nsSelector(ns),
			SideEffects: ptr.To(admissionregistrationv1.SideEffectClassNone), AdmissionReviewVersions: []string{"v1beta1"}}}}
	_, err := vwcs.Create(ctx, c, metav1.CreateOptions{})
	must(t, err, "create v1beta1 config")
	t.Cleanup(func() { _ = vwcs.Delete(ctxT(t), c.Name, metav1.DeleteOptions{}) })
	cms := s.Clientset.CoreV1().ConfigMaps(ns)
	waitFor(t, "the v1beta1 webhook to deny", func() error {
		_, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{GenerateName: "b-", Labels: map[string]string{"deny": "yes"}}}, metav1.CreateOptions{})
		if err == nil {
			return errString("created")
		}
		if !strings.Contains(err.Error(), `admission webhook "beta.it.example.com" denied the request`) {
			t.Fatalf("denial: %v", err)
		}
		return nil
	})
	if v := hs.lastVersion(); v != "admission.k8s.io/v1beta1" {
		t.Fatalf("the webhook got a %s review", v)
	}
}

func withCondition(c *admissionregistrationv1.ValidatingWebhookConfiguration, expr string) *admissionregistrationv1.ValidatingWebhookConfiguration {
	c.Webhooks[0].MatchConditions = []admissionregistrationv1.MatchCondition{{Name: "cond", Expression: expr}}
	return c
}

func testBadWebhookConfigs(t *testing.T, s *testutil.Server) {
	ctx := ctxT(t)
	vwcs := s.Clientset.AdmissionregistrationV1().ValidatingWebhookConfigurations()
	base := func() *admissionregistrationv1.ValidatingWebhookConfiguration {
		return &admissionregistrationv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: "it-bad"},
			Webhooks: []admissionregistrationv1.ValidatingWebhook{{Name: "bad.it.example.com",
				ClientConfig: admissionregistrationv1.WebhookClientConfig{URL: ptr.To("https://127.0.0.1:1/x")},
				Rules:        configMapRule(), SideEffects: ptr.To(admissionregistrationv1.SideEffectClassNone),
				AdmissionReviewVersions: []string{"v1"}}}}
	}
	c := base()
	c.Webhooks[0].ClientConfig.URL = ptr.To("http://127.0.0.1:1/x")
	_, err := vwcs.Create(ctx, c, metav1.CreateOptions{})
	wantField(t, err, "webhooks[0].clientConfig.url")
	c = base()
	c.Webhooks[0].SideEffects = nil
	_, err = vwcs.Create(ctx, c, metav1.CreateOptions{})
	wantField(t, err, "webhooks[0].sideEffects")
	c = base()
	c.Webhooks[0].TimeoutSeconds = ptr.To(int32(31))
	_, err = vwcs.Create(ctx, c, metav1.CreateOptions{})
	wantField(t, err, "webhooks[0].timeoutSeconds")
	c = base()
	c.Webhooks[0].Name = "short"
	_, err = vwcs.Create(ctx, c, metav1.CreateOptions{})
	wantField(t, err, "webhooks[0].name")
	c = base()
	c.Webhooks[0].MatchConditions = []admissionregistrationv1.MatchCondition{{Name: "ok", Expression: "true"}, {Name: "broken", Expression: "object.metadata.name =="}}
	_, err = vwcs.Create(ctx, c, metav1.CreateOptions{})
	wantField(t, err, "webhooks[0].matchConditions[1].expression")
	c = base()
	c.Webhooks[0].MatchConditions = []admissionregistrationv1.MatchCondition{{Name: "int", Expression: "1"}}
	_, err = vwcs.Create(ctx, c, metav1.CreateOptions{})
	wantField(t, err, "webhooks[0].matchConditions[0].expression")
}
