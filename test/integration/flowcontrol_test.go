package integration

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"

	"github.com/orch/orch/test/testutil"
)

func init() {
	register("FlowControl", testFlowControl)
}

// testFlowControl: flowcontrol.apiserver.k8s.io/v1 with its bootstrap
// objects, CRUD, validation and status; requests are classified to the
// matching FlowSchema in the response headers, the level's nominal limit
// is on /metrics and the FlowSchema's Dangling condition is kept.
func testFlowControl(t *testing.T, s *testutil.Server) {
	ctx := ctxT(t)
	fc := s.Clientset.FlowcontrolV1()
	waitFor(t, "the bootstrap configuration", func() error {
		for _, name := range []string{"exempt", "catch-all", "global-default", "system-leader-election"} {
			if _, err := fc.FlowSchemas().Get(ctx, name, metav1.GetOptions{}); err != nil {
				return err
			}
		}
		_, err := fc.PriorityLevelConfigurations().Get(ctx, "workload-low", metav1.GetOptions{})
		return err
	})
	res, err := s.Clientset.Discovery().ServerResourcesForGroupVersion("flowcontrol.apiserver.k8s.io/v1")
	must(t, err, "discovery")
	if got := resourceNames(res.APIResources); got != "flowschemas,flowschemas/status,prioritylevelconfigurations,prioritylevelconfigurations/status" {
		t.Fatalf("discovery: %s", got)
	}
	name := "it-" + newNamespace(t, s.Clientset)
	pl := &flowcontrolv1.PriorityLevelConfiguration{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: flowcontrolv1.PriorityLevelConfigurationSpec{Type: flowcontrolv1.PriorityLevelEnablementLimited,
			Limited: &flowcontrolv1.LimitedPriorityLevelConfiguration{LimitResponse: flowcontrolv1.LimitResponse{
				Type: flowcontrolv1.LimitResponseTypeQueue, Queuing: &flowcontrolv1.QueuingConfiguration{}}}}}
	pl, err = fc.PriorityLevelConfigurations().Create(ctx, pl, metav1.CreateOptions{})
	must(t, err, "create priority level")
	t.Cleanup(func() { _ = fc.PriorityLevelConfigurations().Delete(ctxT(t), name, metav1.DeleteOptions{}) })
	if l := pl.Spec.Limited; *l.NominalConcurrencyShares != 30 || l.LimitResponse.Queuing.Queues != 64 || pl.Generation != 1 {
		t.Fatalf("priority level defaults: %+v %+v", l, l.LimitResponse.Queuing)
	}
	fs := itFlowSchema(name, "it-apf-user")
	fs, err = fc.FlowSchemas().Create(ctx, fs, metav1.CreateOptions{})
	must(t, err, "create FlowSchema")
	t.Cleanup(func() { _ = fc.FlowSchemas().Delete(ctxT(t), name, metav1.DeleteOptions{}) })
	testFlowControlValidation(t, s, name)
	testFlowSchemaStatus(t, s, name)
	testClassification(t, s, fs, pl)
}

func resourceNames(rs []metav1.APIResource) string {
	var names []string
	for _, r := range rs {
		names = append(names, r.Name)
	}
	return strings.Join(names, ",")
}

func itFlowSchema(name, user string) *flowcontrolv1.FlowSchema {
	return &flowcontrolv1.FlowSchema{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: flowcontrolv1.FlowSchemaSpec{MatchingPrecedence: 500,
			PriorityLevelConfiguration: flowcontrolv1.PriorityLevelConfigurationReference{Name: name},
			DistinguisherMethod:        &flowcontrolv1.FlowDistinguisherMethod{Type: flowcontrolv1.FlowDistinguisherMethodByUserType},
			Rules: []flowcontrolv1.PolicyRulesWithSubjects{{
				Subjects:         []flowcontrolv1.Subject{{Kind: flowcontrolv1.SubjectKindUser, User: &flowcontrolv1.UserSubject{Name: user}}},
				NonResourceRules: []flowcontrolv1.NonResourcePolicyRule{{Verbs: []string{"*"}, NonResourceURLs: []string{"*"}}},
			}}}}
}

func testFlowControlValidation(t *testing.T, s *testutil.Server, name string) {
	ctx := ctxT(t)
	fc := s.Clientset.FlowcontrolV1()
	bad := itFlowSchema(name+"-bad", "x")
	bad.Spec.MatchingPrecedence = 1
	bad.Spec.Rules[0].NonResourceRules[0].NonResourceURLs = []string{"/a*"}
	_, err := fc.FlowSchemas().Create(ctx, bad, metav1.CreateOptions{})
	wantField(t, err, "spec.matchingPrecedence")
	wantField(t, err, "spec.rules[0].nonResourceRules[0].nonResourceURLs[0]")
	badPL := &flowcontrolv1.PriorityLevelConfiguration{ObjectMeta: metav1.ObjectMeta{Name: name + "-bad"},
		Spec: flowcontrolv1.PriorityLevelConfigurationSpec{Type: flowcontrolv1.PriorityLevelEnablementExempt}}
	_, err = fc.PriorityLevelConfigurations().Create(ctx, badPL, metav1.CreateOptions{})
	wantField(t, err, "spec.type")
	catchAll, err := fc.FlowSchemas().Get(ctx, "catch-all", metav1.GetOptions{})
	must(t, err, "get catch-all")
	catchAll.Spec.MatchingPrecedence = 9000
	_, err = fc.FlowSchemas().Update(ctx, catchAll, metav1.UpdateOptions{})
	wantField(t, err, "spec")
}

// testFlowSchemaStatus: the controller's Dangling condition, status writes
// keep the spec, spec writes keep the status.
func testFlowSchemaStatus(t *testing.T, s *testutil.Server, name string) {
	ctx := ctxT(t)
	fss := s.Clientset.FlowcontrolV1().FlowSchemas()
	var fs *flowcontrolv1.FlowSchema
	waitFor(t, "Dangling=False", func() error {
		var err error
		if fs, err = fss.Get(ctx, name, metav1.GetOptions{}); err != nil {
			return err
		}
		for _, c := range fs.Status.Conditions {
			if c.Type == flowcontrolv1.FlowSchemaConditionDangling && c.Status == flowcontrolv1.ConditionFalse && c.Reason == "Found" {
				return nil
			}
		}
		return fmt.Errorf("conditions %+v", fs.Status.Conditions)
	})
	fs.Status.Conditions = append(fs.Status.Conditions, flowcontrolv1.FlowSchemaCondition{Type: "ITCondition", Status: "True"})
	fs.Spec.MatchingPrecedence = 7
	fs, err := fss.UpdateStatus(ctx, fs, metav1.UpdateOptions{})
	must(t, err, "update status")
	if fs.Spec.MatchingPrecedence != 500 || len(fs.Status.Conditions) != 2 {
		t.Fatalf("status update: spec %+v status %+v", fs.Spec, fs.Status)
	}
	p, err := fss.Patch(ctx, name, types.MergePatchType, []byte(`{"spec":{"matchingPrecedence":600},"status":{"conditions":[]}}`), metav1.PatchOptions{})
	must(t, err, "patch spec")
	if p.Spec.MatchingPrecedence != 600 || len(p.Status.Conditions) != 2 || p.Generation != 2 {
		t.Fatalf("spec patch: generation %d spec %+v status %+v", p.Generation, p.Spec, p.Status)
	}
}

// testClassification: requests of the FlowSchema's user carry its UID and
// its level's; others land in a bootstrap FlowSchema.
func testClassification(t *testing.T, s *testutil.Server, fs *flowcontrolv1.FlowSchema, pl *flowcontrolv1.PriorityLevelConfiguration) {
	ctx := ctxT(t)
	as := func(user string) http.Header {
		cfg, err := clientcmd.BuildConfigFromFlags("", s.Kubeconfig)
		must(t, err, "kubeconfig")
		cfg.Impersonate = rest.ImpersonationConfig{UserName: user, Groups: []string{"system:authenticated"}}
		rt, err := rest.TransportFor(cfg)
		must(t, err, "transport")
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, cfg.Host+"/version", nil)
		must(t, err, "request")
		resp, err := rt.RoundTrip(req)
		must(t, err, "GET /version as %s", user)
		_ = resp.Body.Close()
		return resp.Header
	}
	waitFor(t, "classification to the new FlowSchema", func() error {
		h := as("it-apf-user")
		if h.Get("X-Kubernetes-PF-FlowSchema-UID") != string(fs.UID) || h.Get("X-Kubernetes-PF-PriorityLevel-UID") != string(pl.UID) {
			return fmt.Errorf("headers %v", h)
		}
		return nil
	})
	global, err := s.Clientset.FlowcontrolV1().FlowSchemas().Get(ctx, "global-default", metav1.GetOptions{})
	must(t, err, "get global-default")
	if h := as("someone-else"); h.Get("X-Kubernetes-PF-FlowSchema-UID") != string(global.UID) {
		t.Fatalf("another user's request: headers %v, want global-default %s", h, global.UID)
	}
	metrics, err := s.Clientset.CoreV1().RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
	must(t, err, "GET /metrics")
	if want := fmt.Sprintf(`apiserver_flowcontrol_nominal_limit_seats{priority_level=%q} `, pl.Name); !strings.Contains(string(metrics), want) {
		t.Fatalf("/metrics lacks %s:\n%s", want, metrics)
	}
	// The framework of the upstream e2e tests talks protobuf.
	cfg, err := clientcmd.BuildConfigFromFlags("", s.Kubeconfig)
	must(t, err, "kubeconfig")
	cfg.ContentType = "application/vnd.kubernetes.protobuf"
	cs, err := kubernetes.NewForConfig(cfg)
	must(t, err, "protobuf clientset")
	got, err := cs.FlowcontrolV1().PriorityLevelConfigurations().Get(ctx, pl.Name, metav1.GetOptions{})
	if err != nil || ptr.Deref(got.Spec.Limited.NominalConcurrencyShares, 0) != 30 {
		t.Fatalf("protobuf get: %v %+v", err, got)
	}
}
