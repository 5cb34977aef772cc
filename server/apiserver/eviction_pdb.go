package apiserver

import (
	"context"
	"fmt"
	"net/http"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// pdbGVR is where PodDisruptionBudgets live.
var pdbGVR = schema.GroupVersionResource{Group: "policy", Version: "v1", Resource: "poddisruptionbudgets"}

// msgViolatesBudget is kube-apiserver's eviction refusal.
const msgViolatesBudget = "Cannot evict pod as it would violate the pod's disruption budget."

// checkDisruptionBudget is the eviction subresource's PodDisruptionBudget
// check (pkg/registry/core/pod/storage/eviction.go): a terminal or
// not-yet-running pod may always go; otherwise the pod's one matching
// budget must allow a disruption, which is taken from it (status
// disruptionsAllowed-1 and disruptedPods[pod]) before the pod is deleted.
// More than one matching budget is a 500, as upstream.
func (s *Server) checkDisruptionBudget(ctx context.Context, pod *corev1.Pod, dryRun bool) error {
	if pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed ||
		pod.Status.Phase == corev1.PodPending || pod.DeletionTimestamp != nil {
		return nil
	}
	res := s.byGVR[pdbGVR]
	if res == nil {
		return nil
	}
	pdbs, err := s.matchingBudgets(ctx, pod)
	if err != nil || len(pdbs) == 0 {
		return err
	}
	if len(pdbs) > 1 {
		return apierrors.NewInternalError(fmt.Errorf("This pod has more than one PodDisruptionBudget, which the eviction subresource does not support."))
	}
	if !podReady(pod) && pdbs[0].Spec.UnhealthyPodEvictionPolicy != nil &&
		*pdbs[0].Spec.UnhealthyPodEvictionPolicy == policyv1.AlwaysAllow {
		return nil
	}
	if dryRun {
		return budgetAllows(pdbs[0])
	}
	rc := &reqCtx{res: res, gr: groupResource(res), ns: pod.Namespace, name: pdbs[0].Name}
	_, err = s.guaranteedUpdate(ctx, rc, modeRaw, false, func(cur runtime.Object) (runtime.Object, error) {
		pdb := cur.(*policyv1.PodDisruptionBudget)
		pdb.ResourceVersion = "" // concurrent evictions retry on the fresh budget
		if err := budgetAllows(pdb); err != nil {
			return nil, err
		}
		pdb.Status.DisruptionsAllowed--
		if pdb.Status.DisruptedPods == nil {
			pdb.Status.DisruptedPods = map[string]metav1.Time{}
		}
		pdb.Status.DisruptedPods[pod.Name] = metav1.NewTime(time.Now())
		return pdb, nil
	})
	return err
}

// matchingBudgets lists the budgets of pod's namespace whose selector
// matches it.
func (s *Server) matchingBudgets(ctx context.Context, pod *corev1.Pod) ([]*policyv1.PodDisruptionBudget, error) {
	res := s.byGVR[pdbGVR]
	page, err := s.store.List(ctx, res.Prefix(pod.Namespace), res.Prefix(pod.Namespace), 0)
	if err != nil {
		return nil, err
	}
	var out []*policyv1.PodDisruptionBudget
	for i := range page.KVs {
		obj, err := decodeStored(res, &page.KVs[i])
		if err != nil {
			return nil, err
		}
		pdb := obj.(*policyv1.PodDisruptionBudget)
		sel, err := metav1.LabelSelectorAsSelector(pdb.Spec.Selector)
		if err != nil || sel.Empty() || !sel.Matches(labels.Set(pod.Labels)) {
			continue
		}
		out = append(out, pdb)
	}
	return out, nil
}

// budgetAllows answers 429 unless pdb has a disruption to give.
func budgetAllows(pdb *policyv1.PodDisruptionBudget) error {
	if pdb.Status.ObservedGeneration < pdb.Generation {
		return tooManyRequests(msgViolatesBudget, "DisruptionBudget",
			fmt.Sprintf("The disruption budget %s is still being processed by the server.", pdb.Name))
	}
	if pdb.Status.DisruptionsAllowed < 0 {
		return apierrors.NewForbidden(pdbGVR.GroupResource(), pdb.Name, fmt.Errorf("pdb disruptions allowed is negative"))
	}
	if pdb.Status.DisruptionsAllowed == 0 {
		return tooManyRequests(msgViolatesBudget, "DisruptionBudget",
			fmt.Sprintf("The disruption budget %s needs %d healthy pods and has %d currently",
				pdb.Name, pdb.Status.DesiredHealthy, pdb.Status.CurrentHealthy))
	}
	return nil
}

func tooManyRequests(msg, causeType, causeMsg string) error {
	return &apierrors.StatusError{ErrStatus: metav1.Status{
		Status: metav1.StatusFailure, Code: http.StatusTooManyRequests, Reason: metav1.StatusReasonTooManyRequests,
		Message: msg, Details: &metav1.StatusDetails{Causes: []metav1.StatusCause{{Type: metav1.CauseType(causeType), Message: causeMsg}}},
	}}
}

func podReady(pod *corev1.Pod) bool {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// evictionAllowed reads the pod and checks its disruption budget.
func (s *Server) evictionAllowed(ctx context.Context, rc *reqCtx, dryRun bool) error {
	obj, _, err := s.getStored(ctx, rc.res, rc.ns, rc.name)
	if err != nil {
		return err
	}
	return s.checkDisruptionBudget(ctx, obj.(*corev1.Pod), dryRun)
}
