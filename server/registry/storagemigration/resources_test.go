package storagemigration

import (
	"context"
	"slices"
	"testing"

	svmv1 "k8s.io/api/storagemigration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/orch/orch/server/registry"
)

func svm(group, resource string, conds ...metav1.Condition) *svmv1.StorageVersionMigration {
	return &svmv1.StorageVersionMigration{ObjectMeta: metav1.ObjectMeta{Name: "m", ResourceVersion: "1"},
		Spec:   svmv1.StorageVersionMigrationSpec{Resource: metav1.GroupResource{Group: group, Resource: resource}},
		Status: svmv1.StorageVersionMigrationStatus{Conditions: conds}}
}

func cond(t svmv1.MigrationConditionType, s metav1.ConditionStatus) metav1.Condition {
	return metav1.Condition{Type: string(t), Status: s, Reason: "R", LastTransitionTime: metav1.Now()}
}

func TestValidation(t *testing.T) {
	st := resources(registry.Config{})[0].Strategy
	ctx := context.Background()
	paths := func(obj, old *svmv1.StorageVersionMigration, status bool) []string {
		var out []string
		errs := st.Validate(ctx, obj)
		switch {
		case status:
			errs = st.ValidateStatusUpdate(ctx, obj, old)
		case old != nil:
			errs = st.ValidateUpdate(ctx, obj, old)
		}
		for _, e := range errs {
			out = append(out, e.Field)
		}
		return out
	}
	withRV := func(s *svmv1.StorageVersionMigration, rv string) *svmv1.StorageVersionMigration {
		s.Status.ResourceVersion = rv
		return s
	}
	for _, c := range []struct {
		name     string
		obj, old *svmv1.StorageVersionMigration
		status   bool
		want     []string
	}{
		{"core resource", svm("", "foo"), nil, false, nil},
		{"no resource", svm("apps", ""), nil, false, []string{"spec.resource.resource"}},
		{"bad resource", svm("", "Foo.bar"), nil, false, []string{"spec.resource.resource"}},
		{"bad group", svm("Apps!", "deployments"), nil, false, []string{"spec.resource.group"}},
		{"spec changed", svm("", "bar"), svm("", "foo"), false, []string{"spec"}},
		{"status condition", svm("", "foo", cond("TestCondition", "True")), svm("", "foo"), true, nil},
		{"bad resourceVersion", withRV(svm("", "foo"), "x"), svm("", "foo"), true, []string{"status.resourceVersion"}},
		{"resourceVersion changed", withRV(svm("", "foo"), "5"), withRV(svm("", "foo"), "4"), true, []string{"status.resourceVersion"}},
		{"succeeded and failed", svm("", "foo", cond(svmv1.MigrationSucceeded, "True"), cond(svmv1.MigrationFailed, "True")),
			svm("", "foo"), true, []string{"status.conditions"}},
		{"success taken back", svm("", "foo", cond(svmv1.MigrationSucceeded, "False")),
			svm("", "foo", cond(svmv1.MigrationSucceeded, "True")), true, []string{"status.conditions"}},
	} {
		if got := paths(c.obj, c.old, c.status); !slices.Equal(got, c.want) {
			t.Errorf("%s: errors at %v, want %v", c.name, got, c.want)
		}
	}
}

func TestStatusAndRow(t *testing.T) {
	st := resources(registry.Config{})[0].Strategy
	ctx := context.Background()
	old := svm("apps", "deployments")
	old.Labels = map[string]string{"a": "b"}
	n := svm("", "changed", cond(svmv1.MigrationRunning, "True"))
	st.PrepareForStatusUpdate(ctx, n, old)
	if n.Spec != old.Spec || n.Labels["a"] != "b" {
		t.Errorf("status update changed spec or labels: %+v %v", n.Spec, n.Labels)
	}
	created := svm("", "foo", cond(svmv1.MigrationSucceeded, "True"))
	st.PrepareForCreate(ctx, created)
	if len(created.Status.Conditions) != 0 {
		t.Errorf("create kept status %+v", created.Status)
	}
	if row := st.TableRow(n); row[1] != "deployments.apps" || row[2] != "Running" {
		t.Errorf("row = %v", row)
	}
}
