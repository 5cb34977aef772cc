package clusterroleaggregation

import (
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestAggregate(t *testing.T) {
	sel := func(k string) *rbacv1.AggregationRule {
		return &rbacv1.AggregationRule{ClusterRoleSelectors: []metav1.LabelSelector{{MatchLabels: map[string]string{k: "true"}}}}
	}
	r := func(res string) rbacv1.PolicyRule {
		return rbacv1.PolicyRule{Verbs: []string{"get"}, APIGroups: []string{""}, Resources: []string{res}}
	}
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "agg"}, AggregationRule: sel("x")}
	all := []*rbacv1.ClusterRole{
		role,
		{ObjectMeta: metav1.ObjectMeta{Name: "b", Labels: map[string]string{"x": "true"}}, Rules: []rbacv1.PolicyRule{r("pods"), r("nodes")}},
		{ObjectMeta: metav1.ObjectMeta{Name: "a", Labels: map[string]string{"x": "true"}}, Rules: []rbacv1.PolicyRule{r("nodes")}},
		{ObjectMeta: metav1.ObjectMeta{Name: "c"}, Rules: []rbacv1.PolicyRule{r("secrets")}},
	}
	got, err := Aggregate(role, all)
	if err != nil {
		t.Fatal(err)
	}
	// name order (a before b), duplicates once, unlabelled c left out
	if len(got) != 2 || got[0].Resources[0] != "nodes" || got[1].Resources[0] != "pods" {
		t.Fatalf("aggregated rules %+v", got)
	}
	bad := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "bad"}, AggregationRule: &rbacv1.AggregationRule{
		ClusterRoleSelectors: []metav1.LabelSelector{{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "x", Operator: "Bogus"}}}}}}
	if _, err := Aggregate(bad, all); err == nil {
		t.Fatal("an invalid selector was accepted")
	}
}
