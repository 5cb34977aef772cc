package flowcontrol

import (
	"context"
	"slices"
	"testing"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/apis/flowcontrol/bootstrap"
	"k8s.io/utils/ptr"

	"github.com/orch/orch/server/registry"
)

func resource(t *testing.T, name string) *registry.Resource {
	t.Helper()
	for _, r := range resources(registry.Config{}) {
		if r.Resource == name {
			return r
		}
	}
	t.Fatalf("no resource %s", name)
	return nil
}

// fieldsOf validates obj as a create (after defaulting) and returns the
// paths of the errors.
func fieldsOf(t *testing.T, res *registry.Resource, obj runtime.Object) []string {
	t.Helper()
	res.Strategy.Default(obj)
	var out []string
	for _, e := range res.Strategy.Validate(context.Background(), obj) {
		out = append(out, e.Field)
	}
	return out
}

func userFlowSchema(name string) *flowcontrolv1.FlowSchema {
	return &flowcontrolv1.FlowSchema{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: flowcontrolv1.FlowSchemaSpec{
			PriorityLevelConfiguration: flowcontrolv1.PriorityLevelConfigurationReference{Name: "global-default"},
			Rules: []flowcontrolv1.PolicyRulesWithSubjects{{
				Subjects:         []flowcontrolv1.Subject{{Kind: flowcontrolv1.SubjectKindUser, User: &flowcontrolv1.UserSubject{Name: "noxu"}}},
				NonResourceRules: []flowcontrolv1.NonResourcePolicyRule{{Verbs: []string{"*"}, NonResourceURLs: []string{"*"}}},
			}},
		}}
}

func TestFlowSchemaValidation(t *testing.T) {
	res := resource(t, "flowschemas")
	for _, c := range []struct {
		name   string
		mutate func(*flowcontrolv1.FlowSchema)
		want   []string
	}{
		{"valid", func(*flowcontrolv1.FlowSchema) {}, nil},
		{"precedence 1 reserved", func(fs *flowcontrolv1.FlowSchema) { fs.Spec.MatchingPrecedence = 1 }, []string{"spec.matchingPrecedence"}},
		{"precedence too big", func(fs *flowcontrolv1.FlowSchema) { fs.Spec.MatchingPrecedence = 10001 }, []string{"spec.matchingPrecedence"}},
		{"no level", func(fs *flowcontrolv1.FlowSchema) { fs.Spec.PriorityLevelConfiguration.Name = "" },
			[]string{"spec.priorityLevelConfiguration.name"}},
		{"bad distinguisher", func(fs *flowcontrolv1.FlowSchema) {
			fs.Spec.DistinguisherMethod = &flowcontrolv1.FlowDistinguisherMethod{Type: "ByColour"}
		}, []string{"spec.distinguisherMethod.type"}},
		{"no subjects", func(fs *flowcontrolv1.FlowSchema) { fs.Spec.Rules[0].Subjects = nil }, []string{"spec.rules[0].subjects"}},
		{"user subject with group", func(fs *flowcontrolv1.FlowSchema) {
			fs.Spec.Rules[0].Subjects[0].Group = &flowcontrolv1.GroupSubject{Name: "g"}
		}, []string{"spec.rules[0].subjects[0].group"}},
		{"service account without namespace", func(fs *flowcontrolv1.FlowSchema) {
			fs.Spec.Rules[0].Subjects[0] = flowcontrolv1.Subject{Kind: flowcontrolv1.SubjectKindServiceAccount,
				ServiceAccount: &flowcontrolv1.ServiceAccountSubject{Name: "*"}}
		}, []string{"spec.rules[0].subjects[0].serviceAccount.namespace"}},
		{"no rules of either kind", func(fs *flowcontrolv1.FlowSchema) { fs.Spec.Rules[0].NonResourceRules = nil }, []string{"spec.rules[0]"}},
		{"bad url and verb", func(fs *flowcontrolv1.FlowSchema) {
			fs.Spec.Rules[0].NonResourceRules[0] = flowcontrolv1.NonResourcePolicyRule{Verbs: []string{"fly"}, NonResourceURLs: []string{"/a*"}}
		}, []string{"spec.rules[0].nonResourceRules[0].verbs", "spec.rules[0].nonResourceRules[0].nonResourceURLs[0]"}},
		{"resource rule needs namespaces", func(fs *flowcontrolv1.FlowSchema) {
			fs.Spec.Rules[0].ResourceRules = []flowcontrolv1.ResourcePolicyRule{{Verbs: []string{"get"}, APIGroups: []string{""},
				Resources: []string{"pods", "*"}}}
		}, []string{"spec.rules[0].resourceRules[0].resources", "spec.rules[0].resourceRules[0].namespaces"}},
		{"duplicate condition", func(fs *flowcontrolv1.FlowSchema) {
			fs.Status.Conditions = []flowcontrolv1.FlowSchemaCondition{{Type: "A"}, {Type: "A"}}
		}, []string{"status.conditions[1].type"}},
	} {
		fs := userFlowSchema("fs")
		c.mutate(fs)
		if got := fieldsOf(t, res, fs); !slices.Equal(got, c.want) {
			t.Errorf("%s: errors at %v, want %v", c.name, got, c.want)
		}
	}
}

func TestFlowSchemaDefaults(t *testing.T) {
	fs := userFlowSchema("fs")
	resource(t, "flowschemas").Strategy.Default(fs)
	if fs.Spec.MatchingPrecedence != 1000 {
		t.Errorf("matchingPrecedence = %d, want 1000", fs.Spec.MatchingPrecedence)
	}
}

// TestMandatoryObjects: the bootstrap objects are valid and the mandatory
// ones cannot be changed (but for spec.exempt of the exempt level).
func TestMandatoryObjects(t *testing.T) {
	fsRes, plRes := resource(t, "flowschemas"), resource(t, "prioritylevelconfigurations")
	for _, fs := range append(append([]*flowcontrolv1.FlowSchema{}, bootstrap.MandatoryFlowSchemas...), bootstrap.SuggestedFlowSchemas...) {
		if errs := fieldsOf(t, fsRes, fs.DeepCopy()); len(errs) > 0 {
			t.Errorf("bootstrap FlowSchema %s: errors at %v", fs.Name, errs)
		}
	}
	for _, pl := range append(append([]*flowcontrolv1.PriorityLevelConfiguration{}, bootstrap.MandatoryPriorityLevelConfigurations...),
		bootstrap.SuggestedPriorityLevelConfigurations...) {
		if errs := fieldsOf(t, plRes, pl.DeepCopy()); len(errs) > 0 {
			t.Errorf("bootstrap priority level %s: errors at %v", pl.Name, errs)
		}
	}
	catchAll := bootstrap.MandatoryFlowSchemaCatchAll.DeepCopy()
	catchAll.Spec.MatchingPrecedence = 9999
	if got := fieldsOf(t, fsRes, catchAll); !slices.Equal(got, []string{"spec"}) {
		t.Errorf("changed catch-all FlowSchema: errors at %v, want [spec]", got)
	}
	exempt := bootstrap.MandatoryPriorityLevelConfigurationExempt.DeepCopy()
	exempt.Spec.Exempt.NominalConcurrencyShares = ptr.To(int32(10))
	if got := fieldsOf(t, plRes, exempt); len(got) > 0 {
		t.Errorf("exempt level with other exempt shares: errors at %v", got)
	}
	catchAllPL := bootstrap.MandatoryPriorityLevelConfigurationCatchAll.DeepCopy()
	catchAllPL.Spec.Limited.NominalConcurrencyShares = ptr.To(int32(50))
	if got := fieldsOf(t, plRes, catchAllPL); !slices.Equal(got, []string{"spec"}) {
		t.Errorf("changed catch-all level: errors at %v, want [spec]", got)
	}
}

func limitedLevel(name string) *flowcontrolv1.PriorityLevelConfiguration {
	return &flowcontrolv1.PriorityLevelConfiguration{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: flowcontrolv1.PriorityLevelConfigurationSpec{Type: flowcontrolv1.PriorityLevelEnablementLimited,
			Limited: &flowcontrolv1.LimitedPriorityLevelConfiguration{
				LimitResponse: flowcontrolv1.LimitResponse{Type: flowcontrolv1.LimitResponseTypeQueue,
					Queuing: &flowcontrolv1.QueuingConfiguration{}}}}}
}

func TestPriorityLevelDefaultsAndValidation(t *testing.T) {
	res := resource(t, "prioritylevelconfigurations")
	pl := limitedLevel("pl")
	if errs := fieldsOf(t, res, pl); len(errs) > 0 {
		t.Fatalf("defaulted level: errors at %v", errs)
	}
	l := pl.Spec.Limited
	if *l.NominalConcurrencyShares != 30 || *l.LendablePercent != 0 || *l.LimitResponse.Queuing != (flowcontrolv1.QueuingConfiguration{
		Queues: 64, HandSize: 8, QueueLengthLimit: 50}) {
		t.Errorf("defaults = %+v %+v", l, l.LimitResponse.Queuing)
	}
	for _, c := range []struct {
		name   string
		mutate func(*flowcontrolv1.PriorityLevelConfiguration)
		want   []string
	}{
		{"exempt type needs the exempt name", func(p *flowcontrolv1.PriorityLevelConfiguration) {
			p.Spec = flowcontrolv1.PriorityLevelConfigurationSpec{Type: flowcontrolv1.PriorityLevelEnablementExempt}
		}, []string{"spec.type"}},
		{"limited without limited", func(p *flowcontrolv1.PriorityLevelConfiguration) { p.Spec.Limited = nil }, []string{"spec.limited"}},
		{"hand bigger than deck", func(p *flowcontrolv1.PriorityLevelConfiguration) {
			p.Spec.Limited.LimitResponse.Queuing.HandSize = 100
		}, []string{"spec.limited.limitResponse.queuing.handSize"}},
		{"reject with queuing", func(p *flowcontrolv1.PriorityLevelConfiguration) {
			p.Spec.Limited.LimitResponse.Type = flowcontrolv1.LimitResponseTypeReject
		}, []string{"spec.limited.limitResponse.queuing"}},
		{"lendable over 100", func(p *flowcontrolv1.PriorityLevelConfiguration) {
			p.Spec.Limited.LendablePercent = ptr.To(int32(101))
		}, []string{"spec.limited.lendablePercent"}},
		{"negative shares", func(p *flowcontrolv1.PriorityLevelConfiguration) {
			p.Spec.Limited.NominalConcurrencyShares = ptr.To(int32(-1))
		}, []string{"spec.limited.nominalConcurrencyShares"}},
	} {
		p := limitedLevel("pl")
		res.Strategy.Default(p)
		c.mutate(p)
		if got := fieldsOf(t, res, p); !slices.Equal(got, c.want) {
			t.Errorf("%s: errors at %v, want %v", c.name, got, c.want)
		}
	}
}

// TestStatusKeepsEverythingElse: a status write changes neither spec nor
// labels; a spec write keeps the status and bumps the generation.
func TestStatusKeepsEverythingElse(t *testing.T) {
	st := resource(t, "flowschemas").Strategy
	ctx := context.Background()
	old := userFlowSchema("fs")
	old.Generation, old.Labels = 1, map[string]string{"a": "b"}
	st.Default(old)
	n := old.DeepCopy()
	n.Spec.MatchingPrecedence, n.Labels = 5, nil
	n.Status.Conditions = []flowcontrolv1.FlowSchemaCondition{{Type: "Dangling", Status: "False"}}
	st.PrepareForStatusUpdate(ctx, n, old)
	if n.Spec.MatchingPrecedence != 1000 || n.Labels["a"] != "b" || len(n.Status.Conditions) != 1 {
		t.Errorf("status update kept %+v labels %v status %+v", n.Spec, n.Labels, n.Status)
	}
	u := old.DeepCopy()
	u.Spec.MatchingPrecedence = 5
	u.Status.Conditions = n.Status.Conditions
	st.PrepareForUpdate(ctx, u, old)
	if u.Generation != 2 || len(u.Status.Conditions) != 0 {
		t.Errorf("spec update: generation %d status %+v", u.Generation, u.Status)
	}
}

func TestRows(t *testing.T) {
	fs := userFlowSchema("fs")
	fs.Spec.MatchingPrecedence = 500
	fs.Status.Conditions = []flowcontrolv1.FlowSchemaCondition{{Type: "Dangling", Status: "False"}}
	row := resource(t, "flowschemas").Strategy.TableRow(fs)
	if row[1] != "global-default" || row[2] != int64(500) || row[3] != "<none>" || row[5] != "False" {
		t.Errorf("FlowSchema row = %v", row)
	}
	pl := limitedLevel("pl")
	resource(t, "prioritylevelconfigurations").Strategy.Default(pl)
	row = resource(t, "prioritylevelconfigurations").Strategy.TableRow(pl)
	if row[1] != "Limited" || row[2] != int64(30) || row[3] != int64(64) || row[4] != int64(8) || row[5] != int64(50) {
		t.Errorf("priority level row = %v", row)
	}
}
