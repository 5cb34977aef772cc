package integration

import (
	"slices"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/orch/orch/test/testutil"
)

func init() {
	register("ServiceAccountTokens", testServiceAccountTokens)
}

// TestServiceAccountDefaults: every namespace gets a default ServiceAccount
// and the kube-root-ca.crt ConfigMap holding the cluster CA (controllers on,
// unlike TestAPI's server).
func TestServiceAccountDefaults(t *testing.T) {
	s := testutil.StartServer(t, testutil.Options{Quiet: true, ExtraArgs: []string{"--disable-agent"}})
	ns := newNamespace(t, s.Clientset)
	for _, n := range []string{"default", "kube-system", ns} {
		waitFor(t, "default ServiceAccount in "+n, func() error {
			_, err := s.Clientset.CoreV1().ServiceAccounts(n).Get(ctxT(t), "default", metav1.GetOptions{})
			return err
		})
		waitFor(t, "kube-root-ca.crt in "+n, func() error {
			cm, err := s.Clientset.CoreV1().ConfigMaps(n).Get(ctxT(t), "kube-root-ca.crt", metav1.GetOptions{})
			if err == nil && !strings.Contains(cm.Data["ca.crt"], "BEGIN CERTIFICATE") {
				t.Fatalf("kube-root-ca.crt in %s holds %q", n, cm.Data["ca.crt"])
			}
			return err
		})
	}
}

// TestLegacyServiceAccountTokenSecret: a kubernetes.io/service-account-token
// Secret gets its token, ca.crt and namespace; the token authenticates
// until the ServiceAccount is deleted, which deletes the Secret too.
func TestLegacyServiceAccountTokenSecret(t *testing.T) {
	s := testutil.StartServer(t, testutil.Options{Quiet: true, ExtraArgs: []string{"--disable-agent"}})
	ctx := ctxT(t)
	ns := newNamespace(t, s.Clientset)
	_, err := s.Clientset.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "ci"}}, metav1.CreateOptions{})
	must(t, err, "create sa")
	_, err = s.Clientset.CoreV1().Secrets(ns).Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "ci-token",
		Annotations: map[string]string{corev1.ServiceAccountNameKey: "ci"}}, Type: corev1.SecretTypeServiceAccountToken}, metav1.CreateOptions{})
	must(t, err, "create token secret")
	var token string
	waitFor(t, "the token secret to be populated", func() error {
		sec, err := s.Clientset.CoreV1().Secrets(ns).Get(ctx, "ci-token", metav1.GetOptions{})
		if err != nil {
			return err
		}
		token = string(sec.Data["token"])
		if token == "" || string(sec.Data["namespace"]) != ns || !strings.Contains(string(sec.Data["ca.crt"]), "BEGIN CERTIFICATE") {
			return errString("not populated yet")
		}
		return nil
	})
	if who := whoami(t, s, token); who.Username != "system:serviceaccount:"+ns+":ci" {
		t.Fatalf("legacy token is %+v", who)
	}
	must(t, s.Clientset.CoreV1().ServiceAccounts(ns).Delete(ctx, "ci", metav1.DeleteOptions{}), "delete sa")
	waitFor(t, "the token secret to be deleted with its ServiceAccount", func() error {
		_, err := s.Clientset.CoreV1().Secrets(ns).Get(ctx, "ci-token", metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		return errString("still there")
	})
	_, err = saClient(t, s, token).AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	wantCode(t, err, 401, "legacy token of a deleted ServiceAccount")
}

// testServiceAccountTokens: TokenRequest, the token authenticating as the
// ServiceAccount (SelfSubjectReview), TokenReview, bound tokens and
// revocation by deletion, bad requests.
func testServiceAccountTokens(t *testing.T, s *testutil.Server) {
	ctx := ctxT(t)
	ns := newNamespace(t, s.Clientset)
	sas := s.Clientset.CoreV1().ServiceAccounts(ns)
	sa, err := sas.Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "robot"}}, metav1.CreateOptions{})
	must(t, err, "create sa")
	tr, err := sas.CreateToken(ctx, "robot", &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
	must(t, err, "token request")
	if tr.Status.Token == "" || time.Until(tr.Status.ExpirationTimestamp.Time) < 50*time.Minute {
		t.Fatalf("token request answered %+v", tr.Status)
	}
	who := whoami(t, s, tr.Status.Token)
	if who.Username != "system:serviceaccount:"+ns+":robot" || who.UID != string(sa.UID) ||
		!slices.Contains(who.Groups, "system:serviceaccounts:"+ns) || !slices.Contains(who.Groups, "system:authenticated") {
		t.Fatalf("whoami with the token: %+v", who)
	}
	review, err := s.Clientset.AuthenticationV1().TokenReviews().Create(ctx,
		&authenticationv1.TokenReview{Spec: authenticationv1.TokenReviewSpec{Token: tr.Status.Token}}, metav1.CreateOptions{})
	must(t, err, "token review")
	if !review.Status.Authenticated || review.Status.User.Username != who.Username {
		t.Fatalf("token review: %+v", review.Status)
	}
	other, err := s.Clientset.AuthenticationV1().TokenReviews().Create(ctx, &authenticationv1.TokenReview{
		Spec: authenticationv1.TokenReviewSpec{Token: tr.Status.Token, Audiences: []string{"vault"}}}, metav1.CreateOptions{})
	must(t, err, "token review for another audience")
	if other.Status.Authenticated {
		t.Fatalf("token accepted for audience vault: %+v", other.Status)
	}
	testServiceAccountAccess(t, s, ns, tr.Status.Token)
	testBoundToken(t, s, ns)
	testBadTokenRequests(t, s, ns)
	must(t, sas.Delete(ctx, "robot", metav1.DeleteOptions{}), "delete sa")
	_, err = saClient(t, s, tr.Status.Token).AuthenticationV1().SelfSubjectReviews().Create(ctx,
		&authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	wantCode(t, err, 401, "token of a deleted ServiceAccount")
	forged := tr.Status.Token[:strings.LastIndex(tr.Status.Token, ".")+1] + "AAAA"
	_, err = saClient(t, s, forged).CoreV1().Namespaces().List(ctx, metav1.ListOptions{})
	wantCode(t, err, 401, "forged token")
}

// testBoundToken: a token bound to a pod dies with the pod.
func testBoundToken(t *testing.T, s *testutil.Server, ns string) {
	ctx := ctxT(t)
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "holder"}, Spec: corev1.PodSpec{
		NodeName: "nowhere", Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}}
	p, err := s.Clientset.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{})
	must(t, err, "create pod")
	tr, err := s.Clientset.CoreV1().ServiceAccounts(ns).CreateToken(ctx, "robot", &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](600),
			BoundObjectRef: &authenticationv1.BoundObjectReference{Kind: "Pod", APIVersion: "v1", Name: "holder", UID: p.UID}}},
		metav1.CreateOptions{})
	must(t, err, "bound token request")
	who := whoami(t, s, tr.Status.Token)
	if got := who.Extra["authentication.kubernetes.io/pod-uid"]; len(got) != 1 || got[0] != string(p.UID) {
		t.Fatalf("bound token's user extra: %+v", who.Extra)
	}
	// the pod's node is named even when no Node object exists (then without a uid)
	if got := who.Extra["authentication.kubernetes.io/node-name"]; len(got) != 1 || got[0] != "nowhere" || who.Extra["authentication.kubernetes.io/node-uid"] != nil {
		t.Fatalf("bound token's node extra: %+v", who.Extra)
	}
	testBoundTokenNode(t, s, ns)
	must(t, s.Clientset.CoreV1().Pods(ns).Delete(ctx, "holder", metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}), "delete pod")
	waitFor(t, "pod gone", func() error {
		_, err := s.Clientset.CoreV1().Pods(ns).Get(ctx, "holder", metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		return errString("still there")
	})
	_, err = saClient(t, s, tr.Status.Token).AuthenticationV1().SelfSubjectReviews().Create(ctx,
		&authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	wantCode(t, err, 401, "token bound to a deleted pod")
}

// testBoundTokenNode: a token bound to a pod on an existing node names the
// node and its uid (upstream's ServiceAccountTokenPodNodeInfo).
func testBoundTokenNode(t *testing.T, s *testutil.Server, ns string) {
	ctx := ctxT(t)
	node, err := s.Clientset.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "token-node"}}, metav1.CreateOptions{})
	must(t, err, "create node")
	defer func() { _ = s.Clientset.CoreV1().Nodes().Delete(ctx, node.Name, metav1.DeleteOptions{}) }()
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "on-node"}, Spec: corev1.PodSpec{
		NodeName: node.Name, Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}}
	p, err := s.Clientset.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{})
	must(t, err, "create pod")
	defer func() {
		_ = s.Clientset.CoreV1().Pods(ns).Delete(ctx, p.Name, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)})
	}()
	tr, err := s.Clientset.CoreV1().ServiceAccounts(ns).CreateToken(ctx, "robot", &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](600),
			BoundObjectRef: &authenticationv1.BoundObjectReference{Kind: "Pod", APIVersion: "v1", Name: p.Name, UID: p.UID}}},
		metav1.CreateOptions{})
	must(t, err, "bound token request")
	who := whoami(t, s, tr.Status.Token)
	if n, u := who.Extra["authentication.kubernetes.io/node-name"], who.Extra["authentication.kubernetes.io/node-uid"]; len(n) != 1 || n[0] != node.Name || len(u) != 1 || u[0] != string(node.UID) {
		t.Fatalf("bound token's node extra: %+v", who.Extra)
	}
}

func testBadTokenRequests(t *testing.T, s *testutil.Server, ns string) {
	ctx := ctxT(t)
	sas := s.Clientset.CoreV1().ServiceAccounts(ns)
	_, err := sas.CreateToken(ctx, "robot", &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](60)}}, metav1.CreateOptions{})
	if st := wantCode(t, err, 422, "10-minute minimum"); !strings.Contains(st.Message, "spec.expirationSeconds") {
		t.Fatalf("message %q does not name the field", st.Message)
	}
	_, err = sas.CreateToken(ctx, "nobody", &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
	wantCode(t, err, 404, "token for a missing ServiceAccount")
	_, err = sas.CreateToken(ctx, "robot", &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{
		BoundObjectRef: &authenticationv1.BoundObjectReference{Kind: "Node", APIVersion: "v1", Name: "x"}}}, metav1.CreateOptions{})
	wantCode(t, err, 422, "bound to an unsupported kind")
}

func whoami(t *testing.T, s *testutil.Server, token string) authenticationv1.UserInfo {
	t.Helper()
	r, err := saClient(t, s, token).AuthenticationV1().SelfSubjectReviews().Create(ctxT(t),
		&authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	must(t, err, "self subject review")
	return r.Status.UserInfo
}

func saClient(t *testing.T, s *testutil.Server, token string) kubernetes.Interface {
	cfg := anonConfig(s)
	cfg.BearerToken = token
	cs, err := kubernetes.NewForConfig(cfg)
	must(t, err, "clientset")
	return cs
}

func waitFor(t *testing.T, what string, f func() error) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		err := f()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: %v", what, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

type errString string

func (e errString) Error() string { return string(e) }

// testServiceAccountAccess: with only the default policy a ServiceAccount
// reads discovery, version and the OIDC documents, and nothing else (403
// naming the user, verb, resource and namespace).
func testServiceAccountAccess(t *testing.T, s *testutil.Server, ns, token string) {
	cs := saClient(t, s, token)
	if _, err := cs.Discovery().ServerVersion(); err != nil {
		t.Fatalf("/version with a ServiceAccount token: %v", err)
	}
	if _, err := cs.Discovery().ServerGroups(); err != nil {
		t.Fatalf("discovery with a ServiceAccount token: %v", err)
	}
	for _, p := range []string{"/.well-known/openid-configuration", "/openid/v1/jwks"} {
		body, err := cs.Discovery().RESTClient().Get().AbsPath(p).DoRaw(ctxT(t))
		if err != nil || !strings.Contains(string(body), "kubernetes.default.svc") && !strings.Contains(string(body), `"keys"`) {
			t.Fatalf("GET %s: %s %v", p, body, err)
		}
	}
	_, err := cs.CoreV1().Pods(ns).List(ctxT(t), metav1.ListOptions{})
	st := wantCode(t, err, 403, "list pods with no role")
	want := `pods is forbidden: User "system:serviceaccount:` + ns + `:robot" cannot list resource "pods" in API group "" in the namespace "` + ns + `"`
	if !strings.HasPrefix(st.Message, want) {
		t.Fatalf("403 message %q, want it to start with %q", st.Message, want)
	}
}
