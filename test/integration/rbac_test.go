package integration

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/orch/orch/test/testutil"
)

func init() {
	register("RBAC", testRBAC)
}

// rbacSubject is a ServiceAccount with a token: a real, unprivileged identity.
type rbacSubject struct {
	ns, name, user string
	cs             kubernetes.Interface
}

func newRBACSubject(t *testing.T, s *testutil.Server, ns, name string) rbacSubject {
	t.Helper()
	ctx := ctxT(t)
	_, err := s.Clientset.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	must(t, err, "create sa %s", name)
	tr, err := s.Clientset.CoreV1().ServiceAccounts(ns).CreateToken(ctx, name, &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
	must(t, err, "token for %s", name)
	return rbacSubject{ns: ns, name: name, user: "system:serviceaccount:" + ns + ":" + name, cs: saClient(t, s, tr.Status.Token)}
}

func (r rbacSubject) subject() rbacv1.Subject {
	return rbacv1.Subject{Kind: "ServiceAccount", Name: r.name, Namespace: r.ns}
}

// testRBAC: the authorizer, escalation prevention, the review APIs and
// impersonation, with a ServiceAccount token as the unprivileged client.
func testRBAC(t *testing.T, s *testutil.Server) {
	ns, other := newNamespace(t, s.Clientset), newNamespace(t, s.Clientset)
	bot := newRBACSubject(t, s, ns, "bot")
	t.Run("denied with upstream message", func(t *testing.T) {
		_, err := bot.cs.CoreV1().Pods(ns).List(ctxT(t), metav1.ListOptions{})
		st := wantCode(t, err, 403, "list pods without a binding")
		want := fmt.Sprintf(`pods is forbidden: User %q cannot list resource "pods" in API group "" in the namespace %q`, bot.user, ns)
		if st.Message != want {
			t.Fatalf("message\n got %q\nwant %q", st.Message, want)
		}
	})
	t.Run("role binding grants", func(t *testing.T) { testRoleBindingGrants(t, s, bot, ns, other) })
	t.Run("reviews", func(t *testing.T) { testAccessReviews(t, s, bot, ns, other) })
	t.Run("escalation", func(t *testing.T) { testEscalation(t, s, ns) })
	t.Run("impersonation", func(t *testing.T) { testImpersonation(t, s, bot, ns) })
	t.Run("bad objects", func(t *testing.T) { testBadRBACObjects(t, s, ns) })
	t.Run("default policy", func(t *testing.T) { testDefaultPolicy(t, s, bot) })
	t.Run("resourceNames cover a single-object list", func(t *testing.T) { testNamedList(t, s, ns) })
}

func testRoleBindingGrants(t *testing.T, s *testutil.Server, bot rbacSubject, ns, other string) {
	ctx := ctxT(t)
	role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "pod-reader"},
		Rules: []rbacv1.PolicyRule{{Verbs: []string{"get", "list"}, APIGroups: []string{""}, Resources: []string{"pods"}}}}
	_, err := s.Clientset.RbacV1().Roles(ns).Create(ctx, role, metav1.CreateOptions{})
	must(t, err, "create role")
	rb := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "bot-reads-pods"},
		RoleRef: rbacv1.RoleRef{Kind: "Role", Name: "pod-reader"}, Subjects: []rbacv1.Subject{bot.subject()}}
	got, err := s.Clientset.RbacV1().RoleBindings(ns).Create(ctx, rb, metav1.CreateOptions{})
	must(t, err, "create rolebinding")
	if got.RoleRef.APIGroup != rbacv1.GroupName {
		t.Fatalf("roleRef.apiGroup not defaulted: %+v", got.RoleRef)
	}
	waitFor(t, "the binding to take effect", func() error {
		_, err := bot.cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
		return err
	})
	_, err = bot.cs.CoreV1().Pods(other).List(ctx, metav1.ListOptions{})
	wantCode(t, err, 403, "list pods in another namespace")
	err = bot.cs.CoreV1().Pods(ns).Delete(ctx, "x", metav1.DeleteOptions{})
	wantCode(t, err, 403, "delete a pod with a read-only role")
}

func testAccessReviews(t *testing.T, s *testutil.Server, bot rbacSubject, ns, other string) {
	ctx := ctxT(t)
	can := func(namespace string) bool {
		r, err := bot.cs.AuthorizationV1().SelfSubjectAccessReviews().Create(ctx, &authorizationv1.SelfSubjectAccessReview{
			Spec: authorizationv1.SelfSubjectAccessReviewSpec{ResourceAttributes: &authorizationv1.ResourceAttributes{
				Namespace: namespace, Verb: "list", Resource: "pods"}}}, metav1.CreateOptions{})
		must(t, err, "ssar")
		return r.Status.Allowed
	}
	if !can(ns) || can(other) {
		t.Fatalf("SelfSubjectAccessReview: list pods in %s=%v, in %s=%v; want true, false", ns, can(ns), other, can(other))
	}
	sar, err := s.Clientset.AuthorizationV1().SubjectAccessReviews().Create(ctx, &authorizationv1.SubjectAccessReview{
		Spec: authorizationv1.SubjectAccessReviewSpec{User: bot.user, Groups: []string{"system:serviceaccounts"},
			ResourceAttributes: &authorizationv1.ResourceAttributes{Namespace: ns, Verb: "get", Resource: "pods"}}}, metav1.CreateOptions{})
	must(t, err, "sar")
	if !sar.Status.Allowed || !strings.Contains(sar.Status.Reason, "bot-reads-pods") {
		t.Fatalf("SubjectAccessReview: %+v", sar.Status)
	}
	_, err = s.Clientset.AuthorizationV1().SubjectAccessReviews().Create(ctx, &authorizationv1.SubjectAccessReview{
		Spec: authorizationv1.SubjectAccessReviewSpec{User: "x"}}, metav1.CreateOptions{})
	if st := wantCode(t, err, 422, "sar without attributes"); !strings.Contains(st.Message, "spec.resourceAttributes") {
		t.Fatalf("message %q does not name spec.resourceAttributes", st.Message)
	}
	_, err = s.Clientset.AuthorizationV1().LocalSubjectAccessReviews(ns).Create(ctx, &authorizationv1.LocalSubjectAccessReview{
		Spec: authorizationv1.SubjectAccessReviewSpec{User: "x",
			ResourceAttributes: &authorizationv1.ResourceAttributes{Namespace: other, Verb: "get", Resource: "pods"}}}, metav1.CreateOptions{})
	wantCode(t, err, 422, "lsar in the wrong namespace")
	ssrr, err := bot.cs.AuthorizationV1().SelfSubjectRulesReviews().Create(ctx, &authorizationv1.SelfSubjectRulesReview{
		Spec: authorizationv1.SelfSubjectRulesReviewSpec{Namespace: ns}}, metav1.CreateOptions{})
	must(t, err, "ssrr")
	if !hasResourceRule(ssrr.Status.ResourceRules, "pods", "list") || !hasResourceRule(ssrr.Status.ResourceRules, "selfsubjectaccessreviews", "create") {
		t.Fatalf("SelfSubjectRulesReview lacks the bound rules: %+v", ssrr.Status.ResourceRules)
	}
}

func hasResourceRule(rules []authorizationv1.ResourceRule, resource, verb string) bool {
	for _, r := range rules {
		if slices.Contains(r.Resources, resource) && slices.Contains(r.Verbs, verb) {
			return true
		}
	}
	return false
}

// testEscalation: a namespace admin may grant what they hold and no more,
// unless they have escalate (roles) or bind (bindings).
func testEscalation(t *testing.T, s *testutil.Server, ns string) {
	ctx := ctxT(t)
	adm := newRBACSubject(t, s, ns, "nsadmin")
	// What "admin" aggregates (TestAPI's server runs no aggregation controller).
	for _, part := range []string{"admin", "edit", "view"} {
		bind(t, s, ns, "nsadmin-"+part, rbacv1.RoleRef{Kind: "ClusterRole", Name: "system:aggregate-to-" + part}, adm)
	}
	waitFor(t, "admin binding", func() error {
		_, err := adm.cs.RbacV1().Roles(ns).List(ctx, metav1.ListOptions{})
		return err
	})
	held := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "cm-editor"},
		Rules: []rbacv1.PolicyRule{{Verbs: []string{"get", "update"}, APIGroups: []string{""}, Resources: []string{"configmaps"}}}}
	_, err := adm.cs.RbacV1().Roles(ns).Create(ctx, held, metav1.CreateOptions{})
	must(t, err, "create a role within the admin's rights")
	big := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "quota-writer"},
		Rules: []rbacv1.PolicyRule{{Verbs: []string{"create"}, APIGroups: []string{""}, Resources: []string{"resourcequotas"}}}}
	_, err = adm.cs.RbacV1().Roles(ns).Create(ctx, big, metav1.CreateOptions{})
	st := wantCode(t, err, 403, "create a role granting more than held")
	if !strings.Contains(st.Message, "is attempting to grant RBAC permissions not currently held") ||
		!strings.Contains(st.Message, `Resources:["resourcequotas"]`) {
		t.Fatalf("escalation message: %q", st.Message)
	}
	rb := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "to-cluster-admin"},
		RoleRef: rbacv1.RoleRef{Kind: "ClusterRole", Name: "cluster-admin"}, Subjects: []rbacv1.Subject{adm.subject()}}
	_, err = adm.cs.RbacV1().RoleBindings(ns).Create(ctx, rb, metav1.CreateOptions{})
	wantCode(t, err, 403, "bind cluster-admin")
	// With `escalate` on roles and `bind` on cluster-admin both are allowed.
	_, err = s.Clientset.RbacV1().Roles(ns).Create(ctx, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "escalator"},
		Rules: []rbacv1.PolicyRule{
			{Verbs: []string{"escalate"}, APIGroups: []string{"rbac.authorization.k8s.io"}, Resources: []string{"roles"}},
			{Verbs: []string{"bind"}, APIGroups: []string{"rbac.authorization.k8s.io"}, Resources: []string{"clusterroles"}, ResourceNames: []string{"cluster-admin"}},
		}}, metav1.CreateOptions{})
	must(t, err, "create escalator role")
	bind(t, s, ns, "nsadmin-escalator", rbacv1.RoleRef{Kind: "Role", Name: "escalator"}, adm)
	waitFor(t, "escalate verb to take effect", func() error {
		_, err := adm.cs.RbacV1().Roles(ns).Create(ctx, big, metav1.CreateOptions{})
		return err
	})
	_, err = adm.cs.RbacV1().RoleBindings(ns).Create(ctx, rb, metav1.CreateOptions{})
	must(t, err, "bind cluster-admin with the bind verb")
}

func bind(t *testing.T, s *testutil.Server, ns, name string, ref rbacv1.RoleRef, who rbacSubject) {
	t.Helper()
	_, err := s.Clientset.RbacV1().RoleBindings(ns).Create(ctxT(t), &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name},
		RoleRef: ref, Subjects: []rbacv1.Subject{who.subject()}}, metav1.CreateOptions{})
	must(t, err, "create rolebinding %s", name)
}

// testImpersonation: the admin may act as anyone; a ServiceAccount
// without the impersonate verb may not.
func testImpersonation(t *testing.T, s *testutil.Server, bot rbacSubject, ns string) {
	ctx := ctxT(t)
	cfg := rest.CopyConfig(s.Config)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: "alice", Groups: []string{"devs"}}
	alice, err := kubernetes.NewForConfig(cfg)
	must(t, err, "impersonating client")
	who, err := alice.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	must(t, err, "whoami as alice")
	if u := who.Status.UserInfo; u.Username != "alice" || !slices.Contains(u.Groups, "devs") || !slices.Contains(u.Groups, "system:authenticated") {
		t.Fatalf("impersonated identity: %+v", u)
	}
	_, err = alice.CoreV1().Secrets(ns).List(ctx, metav1.ListOptions{})
	wantCode(t, err, 403, "alice lists secrets")
	botCfg := anonConfig(s)
	botCfg.BearerToken = tokenOf(t, s, bot)
	botCfg.Impersonate = rest.ImpersonationConfig{UserName: "bob"}
	asBob, err := kubernetes.NewForConfig(botCfg)
	must(t, err, "bot impersonating bob")
	_, err = asBob.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	st := wantCode(t, err, 403, "impersonation without the impersonate verb")
	want := fmt.Sprintf(`users "bob" is forbidden: User %q cannot impersonate resource "users" in API group "" at the cluster scope`, bot.user)
	if st.Message != want {
		t.Fatalf("message\n got %q\nwant %q", st.Message, want)
	}
}

func tokenOf(t *testing.T, s *testutil.Server, who rbacSubject) string {
	tr, err := s.Clientset.CoreV1().ServiceAccounts(who.ns).CreateToken(ctxT(t), who.name, &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
	must(t, err, "token")
	return tr.Status.Token
}

func testBadRBACObjects(t *testing.T, s *testutil.Server, ns string) {
	ctx := ctxT(t)
	_, err := s.Clientset.RbacV1().Roles(ns).Create(ctx, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "noverbs"},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"pods"}}}}, metav1.CreateOptions{})
	wantField(t, err, "rules[0].verbs")
	_, err = s.Clientset.RbacV1().Roles(ns).Create(ctx, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "urls"},
		Rules: []rbacv1.PolicyRule{{Verbs: []string{"get"}, NonResourceURLs: []string{"/healthz"}}}}, metav1.CreateOptions{})
	wantField(t, err, "rules[0].nonResourceURLs")
	_, err = s.Clientset.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "it-bad-kind"},
		RoleRef: rbacv1.RoleRef{Kind: "Role", Name: "x"}}, metav1.CreateOptions{})
	wantField(t, err, "roleRef.kind")
	_, err = s.Clientset.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "it-sa-no-ns"},
		RoleRef: rbacv1.RoleRef{Kind: "ClusterRole", Name: "view"}, Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Name: "x"}}}, metav1.CreateOptions{})
	wantField(t, err, "subjects[0].namespace")
	rb, err := s.Clientset.RbacV1().RoleBindings(ns).Create(ctx, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "fixed"},
		RoleRef: rbacv1.RoleRef{Kind: "ClusterRole", Name: "view"}}, metav1.CreateOptions{})
	must(t, err, "create binding")
	rb.RoleRef.Name = "edit"
	_, err = s.Clientset.RbacV1().RoleBindings(ns).Update(ctx, rb, metav1.UpdateOptions{})
	wantField(t, err, "roleRef")
}

// wantField: a 422 whose message names field.
// testNamedList: a Role granting list and watch on one named Secret lets
// its subject list and watch that Secret with fieldSelector
// metadata.name=<name> (as informers of one object do), not the others.
func testNamedList(t *testing.T, s *testutil.Server, ns string) {
	ctx := ctxT(t)
	reader := newRBACSubject(t, s, ns, "named-reader")
	_, err := s.Clientset.RbacV1().Roles(ns).Create(ctx, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "one-secret"},
		Rules: []rbacv1.PolicyRule{{Verbs: []string{"get", "list", "watch"}, APIGroups: []string{""}, Resources: []string{"secrets"},
			ResourceNames: []string{"ca"}}}}, metav1.CreateOptions{})
	must(t, err, "role")
	_, err = s.Clientset.RbacV1().RoleBindings(ns).Create(ctx, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "one-secret"},
		RoleRef: rbacv1.RoleRef{Kind: "Role", Name: "one-secret"}, Subjects: []rbacv1.Subject{reader.subject()}}, metav1.CreateOptions{})
	must(t, err, "binding")
	secrets := reader.cs.CoreV1().Secrets(ns)
	waitFor(t, "the named list to be allowed", func() error {
		_, err := secrets.List(ctx, metav1.ListOptions{FieldSelector: "metadata.name=ca"})
		return err
	})
	w, err := secrets.Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=ca"})
	must(t, err, "named watch")
	w.Stop()
	_, err = secrets.List(ctx, metav1.ListOptions{})
	wantCode(t, err, 403, "a list of every secret")
	_, err = secrets.List(ctx, metav1.ListOptions{FieldSelector: "metadata.name=other"})
	wantCode(t, err, 403, "a list of another secret")
}

func wantField(t *testing.T, err error, field string) {
	t.Helper()
	if st := wantCode(t, err, 422, field); !strings.Contains(st.Message, field) {
		t.Fatalf("message %q does not name %s", st.Message, field)
	}
}

// testDefaultPolicy: the bootstrap roles and bindings exist, and what they
// grant every authenticated user works.
func testDefaultPolicy(t *testing.T, s *testutil.Server, bot rbacSubject) {
	ctx := ctxT(t)
	for _, name := range []string{"cluster-admin", "admin", "edit", "view", "system:discovery", "system:basic-user",
		"system:public-info-viewer", "system:node-proxier", "system:auth-delegator", "system:heapster"} {
		cr, err := s.Clientset.RbacV1().ClusterRoles().Get(ctx, name, metav1.GetOptions{})
		must(t, err, "default ClusterRole %s", name)
		if cr.Labels["kubernetes.io/bootstrapping"] != "rbac-defaults" {
			t.Errorf("ClusterRole %s lacks the bootstrapping label: %v", name, cr.Labels)
		}
	}
	_, err := s.Clientset.RbacV1().Roles("kube-system").Get(ctx, "extension-apiserver-authentication-reader", metav1.GetOptions{})
	must(t, err, "extension-apiserver-authentication-reader")
	body, err := bot.cs.Discovery().RESTClient().Get().AbsPath("/version").DoRaw(context.Background())
	must(t, err, "GET /version as a ServiceAccount: %s", body)
	_, err = bot.cs.Discovery().ServerGroups()
	must(t, err, "discovery as a ServiceAccount")
	_, err = bot.cs.Discovery().RESTClient().Get().AbsPath("/.well-known/openid-configuration").DoRaw(context.Background())
	must(t, err, "OIDC discovery as a ServiceAccount")
}

// TestClusterRoleAggregation: the aggregation controller fills admin, edit
// and view from the system:aggregate-to-* roles, and a ClusterRole labelled
// for a custom aggregated role adds its rules there (controllers on).
func TestClusterRoleAggregation(t *testing.T) {
	s := testutil.StartServer(t, testutil.Options{Quiet: true, ExtraArgs: []string{"--disable-agent"}})
	ctx := ctxT(t)
	waitFor(t, "admin aggregates edit and view", func() error {
		cr, err := s.Clientset.RbacV1().ClusterRoles().Get(ctx, "admin", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if !hasPolicyRule(cr.Rules, "rolebindings", "create") || !hasPolicyRule(cr.Rules, "deployments", "create") ||
			!hasPolicyRule(cr.Rules, "pods", "list") {
			return errString("admin's rules are not aggregated yet")
		}
		return nil
	})
	agg := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "it-monitoring"},
		AggregationRule: &rbacv1.AggregationRule{ClusterRoleSelectors: []metav1.LabelSelector{{MatchLabels: map[string]string{"it/aggregate": "true"}}}}}
	_, err := s.Clientset.RbacV1().ClusterRoles().Create(ctx, agg, metav1.CreateOptions{})
	must(t, err, "create aggregated role")
	part := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "it-monitoring-part", Labels: map[string]string{"it/aggregate": "true"}},
		Rules: []rbacv1.PolicyRule{{Verbs: []string{"get"}, APIGroups: []string{"metrics.k8s.io"}, Resources: []string{"pods"}}}}
	_, err = s.Clientset.RbacV1().ClusterRoles().Create(ctx, part, metav1.CreateOptions{})
	must(t, err, "create labelled role")
	waitFor(t, "the labelled role's rules in the aggregated role", func() error {
		cr, err := s.Clientset.RbacV1().ClusterRoles().Get(ctx, "it-monitoring", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if len(cr.Rules) != 1 || cr.Rules[0].APIGroups[0] != "metrics.k8s.io" {
			return fmt.Errorf("rules %+v", cr.Rules)
		}
		return nil
	})
	must(t, s.Clientset.RbacV1().ClusterRoles().Delete(ctx, "it-monitoring-part", metav1.DeleteOptions{}), "delete part")
	waitFor(t, "the rules to go with the labelled role", func() error {
		cr, err := s.Clientset.RbacV1().ClusterRoles().Get(ctx, "it-monitoring", metav1.GetOptions{})
		if err == nil && len(cr.Rules) != 0 {
			return fmt.Errorf("rules %+v", cr.Rules)
		}
		return err
	})
}

func hasPolicyRule(rules []rbacv1.PolicyRule, resource, verb string) bool {
	for _, r := range rules {
		if slices.Contains(r.Resources, resource) && slices.Contains(r.Verbs, verb) {
			return true
		}
	}
	return false
}
