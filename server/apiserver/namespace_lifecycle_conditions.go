package apiserver

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// setNamespaceConditions sets the deletion conditions upstream's namespace
// controller reports on a terminating namespace, and tells whether any changed.
func setNamespaceConditions(ns *corev1.Namespace, sum *contentSummary, now time.Time) bool {
	conds := []corev1.NamespaceCondition{
		{Type: corev1.NamespaceDeletionDiscoveryFailure, Status: corev1.ConditionFalse, Reason: "ResourcesDiscovered", Message: "All resources successfully discovered"},
		{Type: corev1.NamespaceDeletionGVParsingFailure, Status: corev1.ConditionFalse, Reason: "ParsedGroupVersions", Message: "All legacy kube types successfully parsed"},
		{Type: corev1.NamespaceDeletionContentFailure, Status: corev1.ConditionFalse, Reason: "ContentDeleted", Message: "All content successfully deleted, may be waiting on finalization"},
		{Type: corev1.NamespaceContentRemaining, Status: corev1.ConditionFalse, Reason: "ContentRemoved", Message: "All content successfully removed"},
		{Type: corev1.NamespaceFinalizersRemaining, Status: corev1.ConditionFalse, Reason: "ContentHasNoFinalizers", Message: "All content-preserving finalizers finished"},
	}
	if len(sum.failed) > 0 {
		slices.Sort(sum.failed)
		conds[2].Status, conds[2].Reason = corev1.ConditionTrue, "ContentDeletionFailed"
		conds[2].Message = fmt.Sprintf("Failed to delete all resource types, %d remaining: %s", len(sum.failed), strings.Join(sum.failed, ", "))
	}
	if len(sum.remaining) > 0 {
		conds[3].Status, conds[3].Reason = corev1.ConditionTrue, "SomeResourcesRemain"
		conds[3].Message = "Some resources are remaining: " + countList(sum.remaining, "%s has %d resource instances")
	}
	if len(sum.finalizers) > 0 {
		conds[4].Status, conds[4].Reason = corev1.ConditionTrue, "SomeFinalizersRemain"
		conds[4].Message = "Some content in the namespace has finalizers remaining: " + countList(sum.finalizers, "%s in %d resource instances")
	}
	changed := false
	for _, c := range conds {
		changed = setNamespaceCondition(ns, c, now) || changed
	}
	return changed
}

func countList(m map[string]int, format string) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, fmt.Sprintf(format, k, m[k]))
	}
	return strings.Join(parts, ", ")
}

func setNamespaceCondition(ns *corev1.Namespace, c corev1.NamespaceCondition, now time.Time) bool {
	for i := range ns.Status.Conditions {
		old := &ns.Status.Conditions[i]
		if old.Type != c.Type {
			continue
		}
		if old.Status == c.Status && old.Reason == c.Reason && old.Message == c.Message {
			return false
		}
		c.LastTransitionTime = old.LastTransitionTime
		if old.Status != c.Status {
			c.LastTransitionTime = metav1.NewTime(now)
		}
		*old = c
		return true
	}
	c.LastTransitionTime = metav1.NewTime(now)
	ns.Status.Conditions = append(ns.Status.Conditions, c)
	return true
}
