package webhook

import (
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/orch/orch/server/admission"
)

// ruleMatches reports whether one rule covers the request.
func ruleMatches(r admissionregistrationv1.RuleWithOperations, a *admission.Attributes) bool {
	if !anyOrOp(r.Operations, a.Operation) || !anyOr(r.APIGroups, a.Resource.Group) || !anyOr(r.APIVersions, a.Resource.Version) {
		return false
	}
	if !resourceMatches(r.Resources, a.Resource.Resource, a.Subresource) {
		return false
	}
	scope := admissionregistrationv1.AllScopes
	if r.Scope != nil {
		scope = *r.Scope
	}
	namespaced := a.Namespace != "" && a.Resource.Resource != "namespaces"
	switch scope {
	case admissionregistrationv1.ClusterScope:
		return !namespaced
	case admissionregistrationv1.NamespacedScope:
		return namespaced
	}
	return true
}

func anyOrOp(ops []admissionregistrationv1.OperationType, op admission.Operation) bool {
	for _, o := range ops {
		if o == admissionregistrationv1.OperationAll || string(o) == string(op) {
			return true
		}
	}
	return false
}

func anyOr(list []string, v string) bool {
	for _, x := range list {
		if x == "*" || x == v {
			return true
		}
	}
	return false
}

// resourceMatches is upstream's rule (predicates/rules): "res" and "*"
// match the resource only, "res/sub" and "*/sub" that subresource, "res/*"
// res and all its subresources, "*/*" everything.
func resourceMatches(rules []string, res, sub string) bool {
	for _, r := range rules {
		rr, rs, _ := strings.Cut(r, "/")
		if (rr == "*" || rr == res) && (rs == "*" || rs == sub) {
			return true
		}
	}
	return false
}

// selectorsMatch checks namespaceSelector and objectSelector.
func selectorsMatch(nsSel, objSel *metav1.LabelSelector, a *admission.Attributes, src Source) (bool, error) {
	if nsSel != nil && a.Namespace != "" && a.Resource.Resource != "namespaces" {
		sel, err := metav1.LabelSelectorAsSelector(nsSel)
		if err != nil {
			return false, err
		}
		if !sel.Empty() {
			nsLabels, _ := src.NamespaceLabels(a.Namespace)
			if !sel.Matches(labels.Set(nsLabels)) {
				return false, nil
			}
		}
	}
	if a.Resource.Resource == "namespaces" && nsSel != nil {
		if ok, err := labelsMatch(nsSel, a.Object, a.OldObject); !ok || err != nil {
			return false, err
		}
	}
	if objSel != nil {
		return labelsMatch(objSel, a.Object, a.OldObject)
	}
	return true, nil
}

// labelsMatch: the selector matches the new or the old object's labels.
func labelsMatch(s *metav1.LabelSelector, objs ...runtime.Object) (bool, error) {
	sel, err := metav1.LabelSelectorAsSelector(s)
	if err != nil {
		return false, err
	}
	if sel.Empty() {
		return true, nil
	}
	for _, o := range objs {
		if o == nil {
			continue
		}
		if m, ok := o.(metav1.Object); ok && sel.Matches(labels.Set(m.GetLabels())) {
			return true, nil
		}
	}
	return false, nil
}
