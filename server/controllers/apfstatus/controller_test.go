package apfstatus

import (
	"context"
	"testing"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/orch/orch/server/controllers/kit/kittest"
)

func dangling(t *testing.T, client kubernetes.Interface, name string) string {
	t.Helper()
	fs, err := client.FlowcontrolV1().FlowSchemas().Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		return "error: " + err.Error()
	}
	if c := find(fs.Status.Conditions); c != nil {
		return string(c.Status) + "/" + c.Reason
	}
	return "none"
}

// TestDangling: the condition follows the level's existence and leaves the
// other conditions alone.
func TestDangling(t *testing.T) {
	client, _ := kittest.Run(t, New)
	ctx := context.Background()
	fc := client.FlowcontrolV1()
	fs := &flowcontrolv1.FlowSchema{ObjectMeta: metav1.ObjectMeta{Name: "fs"}, Spec: flowcontrolv1.FlowSchemaSpec{
		PriorityLevelConfiguration: flowcontrolv1.PriorityLevelConfigurationReference{Name: "pl"},
		Rules: []flowcontrolv1.PolicyRulesWithSubjects{{
			Subjects:         []flowcontrolv1.Subject{{Kind: "Group", Group: &flowcontrolv1.GroupSubject{Name: "g"}}},
			NonResourceRules: []flowcontrolv1.NonResourcePolicyRule{{Verbs: []string{"*"}, NonResourceURLs: []string{"*"}}}}}}}
	if _, err := fc.FlowSchemas().Create(ctx, fs, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	kittest.Until(t, "Dangling True", func() bool { return dangling(t, client, "fs") == "True/NotFound" })

	cur, _ := fc.FlowSchemas().Get(ctx, "fs", metav1.GetOptions{})
	cur.Status.Conditions = append(cur.Status.Conditions, flowcontrolv1.FlowSchemaCondition{Type: "Other", Status: "True"})
	if _, err := fc.FlowSchemas().UpdateStatus(ctx, cur, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	pl := &flowcontrolv1.PriorityLevelConfiguration{ObjectMeta: metav1.ObjectMeta{Name: "pl"}, Spec: flowcontrolv1.PriorityLevelConfigurationSpec{
		Type: "Limited", Limited: &flowcontrolv1.LimitedPriorityLevelConfiguration{NominalConcurrencyShares: ptr.To(int32(1)),
			LimitResponse: flowcontrolv1.LimitResponse{Type: "Reject"}}}}
	if _, err := fc.PriorityLevelConfigurations().Create(ctx, pl, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	kittest.Until(t, "Dangling False", func() bool { return dangling(t, client, "fs") == "False/Found" })
	got, _ := fc.FlowSchemas().Get(ctx, "fs", metav1.GetOptions{})
	if len(got.Status.Conditions) != 2 {
		t.Errorf("conditions %+v, want Dangling and Other", got.Status.Conditions)
	}
	if err := fc.PriorityLevelConfigurations().Delete(ctx, "pl", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	kittest.Until(t, "Dangling True again", func() bool { return dangling(t, client, "fs") == "True/NotFound" })
}
