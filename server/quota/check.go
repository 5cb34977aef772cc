package quota

import (
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// Matches reports whether a quota's scopes select obj (only pods have
// scoped usage; other objects match quotas without pod scopes).
func Matches(q *corev1.ResourceQuota, obj any) bool {
	pod, isPod := obj.(*corev1.Pod)
	for _, s := range q.Spec.Scopes {
		if !isPod {
			return false
		}
		if !scopeMatches(s, pod) {
			return false
		}
	}
	return true
}

func scopeMatches(s corev1.ResourceQuotaScope, p *corev1.Pod) bool {
	terminating := p.Spec.ActiveDeadlineSeconds != nil && *p.Spec.ActiveDeadlineSeconds >= 0
	bestEffort := isBestEffort(p)
	switch s {
	case corev1.ResourceQuotaScopeTerminating:
		return terminating
	case corev1.ResourceQuotaScopeNotTerminating:
		return !terminating
	case corev1.ResourceQuotaScopeBestEffort:
		return bestEffort
	case corev1.ResourceQuotaScopeNotBestEffort:
		return !bestEffort
	}
	return true
}

func isBestEffort(p *corev1.Pod) bool {
	for _, cs := range [][]corev1.Container{p.Spec.Containers, p.Spec.InitContainers} {
		for _, c := range cs {
			if len(c.Resources.Requests) > 0 || len(c.Resources.Limits) > 0 {
				return false
			}
		}
	}
	return true
}

// Check reports whether charging usage to q keeps it within spec.hard and
// returns the new used list. The error text is kube-apiserver's.
func Check(q *corev1.ResourceQuota, obj any, usage corev1.ResourceList) (corev1.ResourceList, error) {
	if err := mustSpecify(q, obj); err != nil {
		return nil, err
	}
	used := q.Status.Used
	var exceeded []corev1.ResourceName
	newUsed := corev1.ResourceList{}
	for k, v := range used {
		newUsed[k] = v.DeepCopy()
	}
	charged := false
	for name, hard := range q.Spec.Hard {
		u, ok := usage[name]
		if !ok {
			continue
		}
		n := newUsed[name]
		n.Add(u)
		newUsed[name] = n
		charged = true
		if n.Cmp(hard) > 0 {
			exceeded = append(exceeded, name)
		}
	}
	if len(exceeded) > 0 {
		return nil, fmt.Errorf("exceeded quota: %s, requested: %s, used: %s, limited: %s", q.Name,
			render(exceeded, usage), render(exceeded, used), render(exceeded, q.Spec.Hard))
	}
	if !charged {
		return nil, nil
	}
	return newUsed, nil
}

func render(names []corev1.ResourceName, l corev1.ResourceList) string {
	sort.Slice(names, func(i, j int) bool { return names[i] < names[j] })
	parts := make([]string, 0, len(names))
	for _, n := range names {
		q := l[n]
		parts = append(parts, fmt.Sprintf("%s=%s", n, q.String()))
	}
	return strings.Join(parts, ",")
}

// mustSpecify is upstream's rule that a pod under a quota constraining a
// compute resource must state it for every container.
func mustSpecify(q *corev1.ResourceQuota, obj any) error {
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return nil
	}
	var missing []string
	for name := range q.Spec.Hard {
		r, limit, compute := computeNames(name)
		if !compute {
			continue
		}
		for _, c := range allContainers(pod) {
			l := c.Resources.Requests
			if limit {
				l = c.Resources.Limits
			}
			if _, ok := l[r]; !ok {
				missing = append(missing, fmt.Sprintf("%s for: %s", name, c.Name))
				break
			}
		}
	}
	if len(missing) == 0 {
		return nil
	}
	sort.Strings(missing)
	return fmt.Errorf("failed quota: %s: must specify %s", q.Name, strings.Join(missing, "; "))
}

func allContainers(p *corev1.Pod) []corev1.Container {
	out := append([]corev1.Container{}, p.Spec.InitContainers...)
	return append(out, p.Spec.Containers...)
}
